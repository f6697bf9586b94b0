// knightcode's bridge to a Gondolin micro-VM: JSON lines on stdin/stdout, logs on stderr.
//
//   node bridge.mjs <folder of the @earendil-works/gondolin package>
//
// Requests carry an "id"; every event answering one carries the same id:
//   {"id":1,"op":"start","workspace":DIR,"accel":"tcg","imagePath":DIR|null,"memory":"1G","cpus":2,
//    "net":{"enabled":false,"allowedHosts":[]},"bootTimeoutMs":180000}
//       -> {"event":"ready","shell":"/bin/sh","bootMs":9800}
//   {"id":2,"op":"exec","argv":[...],"cwd":"/workspace","env":{...},"stdin":B64|null}
//       -> {"event":"stdout"|"stderr","data":B64}... then {"event":"exit","code":0,"signal":null,
//          "missing":null|"cwd"|"program"}
//   {"id":3,"op":"kill","target":2,"grace":0.2}      -> {"event":"killed","found":true}
//   {"id":4,"op":"fs","call":"readFile"|"writeFile"|"stat"|"listDir"|"mkdir"|"deleteFile",
//    "path":P,"data":B64}                             -> {"event":"result","value":...}
//   {"id":5,"op":"close"}                             -> {"event":"closed"}
// Any failure answers {"event":"error","message":...}. End of stdin closes the VM and exits.
//
// Gondolin's own abort only rejects the local promise; the guest process runs on. So every exec
// runs under a wrapper that records its pid in /run/kc/<id> and becomes a session leader
// (setsid), and "kill" signals that whole process group from a second exec: TERM, then KILL
// after the grace period.

import { readFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const moduleRoot = process.argv[2];
if (!moduleRoot) {
  process.stderr.write("usage: node bridge.mjs <gondolin package folder>\n");
  process.exit(2);
}
const manifest = JSON.parse(readFileSync(path.join(moduleRoot, "package.json"), "utf8"));
const exported = manifest.exports?.["."];
const entry = (typeof exported === "string" ? exported : exported?.import) ?? manifest.main ?? "index.js";
const gondolin = await import(pathToFileURL(path.join(moduleRoot, entry)).href);

const PID_DIR = "/run/kc";
// A per-bridge marker the wrapper writes to stderr when the cwd or the program is missing, so
// that the caller can raise ENOENT instead of reporting a command that exited 127.
const MARK = `\u0001kc-missing-${process.pid}:`;
// $1 pid file, $2 cwd, $3 setsid program ("" when the guest has none), then the argv.
const WRAPPER = [
  'echo $$ > "$1" || exit 126',
  `cd "$2" 2>/dev/null || { printf '${MARK}cwd\\n' >&2; exit 127; }`,
  'setsid_prog=$3; shift 3',
  `case $1 in */*) [ -e "$1" ] ;; *) command -v "$1" > /dev/null 2>&1 ;; esac || { printf '${MARK}program\\n' >&2; exit 127; }`,
  'if [ -n "$setsid_prog" ]; then exec "$setsid_prog" "$@"; else exec "$@"; fi',
].join("\n");
// Waits (up to 2 s) for the pid file of an exec that may not have started yet, then signals its
// process group (the process alone when it is not a group leader: no setsid in the guest).
const KILLER = [
  'i=0; while [ ! -s "$1" ]; do i=$((i+1)); [ "$i" -gt 100 ] && exit 3; sleep 0.02; done',
  'read -r pid < "$1"',
  'kill -"$2" -"$pid" 2>/dev/null || kill -"$2" "$pid" 2>/dev/null || exit 1',
  "exit 0",
].join("\n");

let vm = null;
let setsidProgram = "";
let baseNames = []; // the guest's own variables: unset unless the request sets them
const execs = new Map(); // id -> {pidFile, finished: Promise}
let finishedPidFiles = []; // removed in a batch by a later exec's wrapper

function send(message) {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function log(text) {
  process.stderr.write(`[bridge] ${text}\n`);
}

async function start(request) {
  if (vm) throw new Error("the VM is already started");
  const started = Date.now();
  const net = request.net ?? {};
  const options = {
    sandbox: {
      accel: request.accel ?? undefined,
      netEnabled: Boolean(net.enabled),
      console: "none",
      imagePath: request.imagePath ?? undefined,
      memory: request.memory ?? undefined,
      cpus: request.cpus ?? undefined,
    },
    vfs: { mounts: { "/workspace": new gondolin.RealFSProvider(request.workspace) } },
    env: {},
    startTimeoutMs: request.bootTimeoutMs ?? 180000,
    sessionLabel: "knightcode",
  };
  if (net.enabled && net.allowedHosts?.length) {
    options.httpHooks = gondolin.createHttpHooks({ allowedHosts: net.allowedHosts }).httpHooks;
  }
  vm = await gondolin.VM.create(options);
  await vm.start();
  const probe = await vm.exec([
    "/bin/sh",
    "-c",
    `mkdir -p ${PID_DIR}; command -v setsid || echo; ` +
      "if [ -x /bin/bash ]; then echo /bin/bash; else echo /bin/sh; fi; " +
      "tr '\\0' '\\n' < /proc/1/environ 2>/dev/null | sed -n 's/^\\([A-Za-z_][A-Za-z0-9_]*\\)=.*/\\1/p'",
  ]);
  if (probe.exitCode !== 0) throw new Error(`guest set-up failed: ${probe.stderr}`);
  const lines = probe.stdout.split("\n");
  setsidProgram = lines[0].trim();
  const shell = lines[1].trim();
  baseNames = lines.slice(2).filter((name) => name && name !== "PWD");
  return { event: "ready", shell, bootMs: Date.now() - started };
}

function wrapperScript(env) {
  const unset = baseNames.filter((name) => !(name in env));
  const stale = finishedPidFiles.splice(0, finishedPidFiles.length);
  const prefix = [];
  if (unset.length) prefix.push(`unset ${unset.join(" ")}`);
  if (stale.length) prefix.push(`rm -f ${stale.join(" ")}`);
  return [...prefix, WRAPPER].join("\n");
}

async function exec(request) {
  if (!vm) throw new Error("the VM is not started");
  const id = request.id;
  const pidFile = `${PID_DIR}/${id}`;
  const env = request.env ?? {};
  const argv = ["/bin/sh", "-c", wrapperScript(env), "kc", pidFile, request.cwd ?? "/", setsidProgram];
  argv.push(...request.argv);
  const options = { env, stdout: "pipe", stderr: "pipe" };
  if (request.stdin != null) options.stdin = Buffer.from(request.stdin, "base64");
  let finish;
  const finished = new Promise((resolve) => (finish = resolve));
  execs.set(id, { pidFile, finished });
  let missing = null;
  let firstStderr = true;
  try {
    const proc = vm.exec(argv, options);
    const streaming = (async () => {
      for await (const chunk of proc.output()) {
        let data = chunk.data;
        if (chunk.stream === "stderr" && firstStderr) {
          firstStderr = false;
          const text = data.toString("latin1");
          if (text.startsWith(MARK)) {
            missing = text.slice(MARK.length).split("\n")[0];
            data = data.subarray(MARK.length + missing.length + 1);
          }
        }
        if (data.length) send({ id, event: chunk.stream, data: data.toString("base64") });
      }
    })();
    const [result] = await Promise.all([proc.result, streaming]);
    const signal = result.signal ?? null;
    return { event: "exit", code: signal === null ? result.exitCode : null, signal, missing };
  } finally {
    finishedPidFiles.push(pidFile);
    execs.delete(id);
    finish();
  }
}

// 0: signalled; 3: no pid file yet; else: the group is gone.
async function signalGroup(pidFile, signal) {
  const result = await vm.exec(["/bin/sh", "-c", KILLER, "kc-kill", pidFile, signal]);
  return result.exitCode;
}

// Signals the group of exec `id`; when its wrapper has not written the pid file yet (a kill right
// after the exec was sent, with the guest busy), tries again for as long as the exec is running.
async function signalExec(id, target, signal) {
  const deadline = Date.now() + 20000;
  for (;;) {
    const status = await signalGroup(target.pidFile, signal);
    if (status !== 3) return status === 0;
    if (!execs.has(id) || Date.now() > deadline) return false;
  }
}

async function kill(request) {
  const target = execs.get(request.target);
  if (!vm || !target) return { event: "killed", found: false };
  const graceMs = Math.max(0, (request.grace ?? 0.2) * 1000);
  let found = true;
  if (graceMs > 0) {
    found = await signalExec(request.target, target, "TERM");
    const ended = await Promise.race([
      target.finished.then(() => true),
      new Promise((resolve) => setTimeout(() => resolve(false), graceMs)),
    ]);
    if (ended) return { event: "killed", found };
  }
  // Grandchildren may outlive the leader, or ignore TERM: KILL the group whatever happened.
  found = (await signalExec(request.target, target, "KILL")) || found;
  return { event: "killed", found };
}

function statValue(stats) {
  return {
    size: stats.size,
    mode: stats.mode,
    mtimeMs: stats.mtimeMs,
    isFile: stats.isFile(),
    isDir: stats.isDirectory(),
  };
}

async function fsCall(request) {
  if (!vm) throw new Error("the VM is not started");
  const target = request.path;
  switch (request.call) {
    case "readFile":
      return (await vm.fs.readFile(target)).toString("base64");
    case "writeFile":
      await vm.fs.writeFile(target, Buffer.from(request.data ?? "", "base64"));
      return null;
    case "stat":
      return statValue(await vm.fs.stat(target));
    case "listDir":
      return await vm.fs.listDir(target);
    case "mkdir":
      await vm.fs.mkdir(target, { recursive: true });
      return null;
    case "deleteFile":
      await vm.fs.deleteFile(target, { recursive: Boolean(request.recursive), force: true });
      return null;
    default:
      throw new Error(`unknown fs call ${request.call}`);
  }
}

let closing = null;
function closeVm() {
  closing ??= (async () => {
    if (vm) {
      try {
        await vm.close();
      } catch (error) {
        log(`close failed: ${error?.message ?? error}`);
      }
    }
  })();
  return closing;
}

async function handle(request) {
  const id = request.id;
  try {
    switch (request.op) {
      case "start":
        send({ id, ...(await start(request)) });
        break;
      case "exec":
        send({ id, ...(await exec(request)) });
        break;
      case "kill":
        send({ id, ...(await kill(request)) });
        break;
      case "fs":
        send({ id, event: "result", value: await fsCall(request) });
        break;
      case "close":
        await closeVm();
        send({ id, event: "closed" });
        process.exit(0);
        break;
      default:
        throw new Error(`unknown op ${request.op}`);
    }
  } catch (error) {
    send({ id, event: "error", message: String(error?.message ?? error), code: error?.code ?? null });
  }
}

const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
input.on("line", (line) => {
  if (!line.trim()) return;
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    log(`not JSON: ${line.slice(0, 200)}`);
    return;
  }
  void handle(request);
});
input.on("close", async () => {
  await closeVm();
  process.exit(0);
});
