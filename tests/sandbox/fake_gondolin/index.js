// A test double of @earendil-works/gondolin: the part of its SDK that knightcode's bridge.mjs
// uses (VM.create/start/exec/fs/close, RealFSProvider, createHttpHooks), running each command
// as a host process. It needs only Node >= 18, so the bridge protocol is tested everywhere.
//
// Guest paths are host paths with three prefixes mapped, in commands and arguments alike:
// /workspace -> the RealFSProvider's folder, /run/kc -> a private folder (the bridge's pid
// files), /proc/1/environ -> a file holding the fake guest's default environment (what the
// bridge reads to learn the guest's own variables). Like sandboxd, a command's environment is
// the guest default overridden by the request's, and close() kills every process it started.
//
// Knobs for tests, read from the environment: FAKE_GONDOLIN_FAIL_START (VM.create throws that
// text), FAKE_GONDOLIN_FAIL_ACCEL (it throws for that accel only), FAKE_GONDOLIN_BOOT_MS (start()
// takes that long).

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const GUEST_ENV = { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", HOME: "/root", TMPDIR: "/tmp", FAKE_GUEST: "1" };

export class RealFSProvider {
  constructor(root) {
    this.root = root;
  }
}

export function createHttpHooks(options = {}) {
  return { httpHooks: { allowedHosts: options.allowedHosts ?? [] }, env: {}, allowedHosts: options.allowedHosts ?? [] };
}

export function hasGuestAssets() {
  return true;
}

class FakeProcess {
  constructor(child) {
    this.queue = [];
    this.wake = null;
    this.open = 2;
    const buffered = { stdout: [], stderr: [] };
    const push = (stream) => (data) => {
      buffered[stream].push(data);
      this.queue.push({ stream, data, text: data.toString() });
      this.wake?.();
    };
    const end = () => {
      this.open -= 1;
      this.wake?.();
    };
    child.stdout.on("data", push("stdout"));
    child.stderr.on("data", push("stderr"));
    child.stdout.on("end", end);
    child.stderr.on("end", end);
    this.result = new Promise((resolve, reject) => {
      child.on("error", reject);
      child.on("close", (code, signal) => {
        resolve({
          exitCode: code ?? 0,
          signal: signal ? os.constants.signals[signal] : undefined,
          stdout: Buffer.concat(buffered.stdout).toString(),
          stderr: Buffer.concat(buffered.stderr).toString(),
        });
      });
    });
  }

  async *output() {
    for (;;) {
      while (this.queue.length) yield this.queue.shift();
      if (this.open === 0) return;
      await new Promise((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  }

  then(onFulfilled, onRejected) {
    return this.result.then(onFulfilled, onRejected);
  }
}

export class VM {
  static async create(options = {}) {
    if (process.env.FAKE_GONDOLIN_FAIL_START) throw new Error(process.env.FAKE_GONDOLIN_FAIL_START);
    if (process.env.FAKE_GONDOLIN_FAIL_ACCEL === options.sandbox?.accel) {
      throw new Error(`qemu: ${options.sandbox.accel} failed (fake)`);
    }
    return new VM(options);
  }

  constructor(options) {
    this.root = fs.mkdtempSync(path.join(os.tmpdir(), "fake-gondolin-"));
    this.workspace = options.vfs.mounts["/workspace"].root;
    this.children = new Set();
    fs.mkdirSync(path.join(this.root, "run", "kc"), { recursive: true });
    const environ = Object.entries(GUEST_ENV).map(([key, value]) => `${key}=${value}\0`).join("");
    fs.writeFileSync(path.join(this.root, "environ"), environ);
    // What the bridge asked for, for the tests to check.
    const sandbox = options.sandbox ?? {};
    const record = {
      accel: sandbox.accel ?? null,
      netEnabled: sandbox.netEnabled ?? null,
      imagePath: sandbox.imagePath ?? null,
      memory: sandbox.memory ?? null,
      cpus: sandbox.cpus ?? null,
      console: sandbox.console ?? null,
      allowedHosts: options.httpHooks?.allowedHosts ?? null,
      workspace: this.workspace,
    };
    fs.writeFileSync(path.join(os.tmpdir(), "fake-gondolin-options.json"), JSON.stringify(record));
    this.fs = {
      readFile: (p) => fs.promises.readFile(this.map(p)),
      writeFile: (p, data) => fs.promises.writeFile(this.map(p), data),
      stat: (p) => fs.promises.stat(this.map(p)),
      listDir: (p) => fs.promises.readdir(this.map(p)),
      mkdir: (p, o) => fs.promises.mkdir(this.map(p), o),
      deleteFile: (p, o) => fs.promises.rm(this.map(p), o),
    };
  }

  map(text) {
    return text
      .replaceAll("/proc/1/environ", path.join(this.root, "environ"))
      .replaceAll("/run/kc", path.join(this.root, "run", "kc"))
      .replaceAll("/workspace", this.workspace);
  }

  async start() {
    const boot = Number(process.env.FAKE_GONDOLIN_BOOT_MS ?? 0);
    if (boot > 0) await new Promise((resolve) => setTimeout(resolve, boot));
  }

  exec(argv, options = {}) {
    const [program, ...args] = argv.map((arg) => this.map(arg));
    const stdin = options.stdin;
    const child = spawn(program, args, {
      cwd: "/",
      env: { ...GUEST_ENV, ...(options.env ?? {}) },
      stdio: [stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    this.children.add(child);
    child.on("close", () => this.children.delete(child));
    if (stdin !== undefined) {
      child.stdin.on("error", () => {});
      child.stdin.end(stdin);
    }
    return new FakeProcess(child);
  }

  async close() {
    for (const child of this.children) {
      // The wrapper made each command a session leader: its group is its pid.
      for (const target of [-child.pid, child.pid]) {
        try {
          process.kill(target, "SIGKILL");
        } catch {
          // already gone
        }
      }
    }
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}
