"""Timing helpers shared by the benchmarks: run a command repeatedly, report the median."""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Mapping, Sequence


def median_wall_ms(
    command: Sequence[str],
    runs: int = 30,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    warmup: int = 3,
) -> float:
    """Median wall time of ``command`` in milliseconds over ``runs`` runs (after ``warmup``)."""
    samples = []
    for index in range(warmup + runs):
        started = time.perf_counter()
        subprocess.run(
            command,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if index >= warmup:
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def interleaved_medians(
    commands: Mapping[str, Sequence[str]],
    runs: int = 30,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> dict[str, float]:
    """Median wall times of several commands measured in alternation, so that machine noise
    falls on all of them alike.
    """
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for index in range(runs + 3):
        for name, command in commands.items():
            started = time.perf_counter()
            subprocess.run(
                command,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            if index >= 3:
                samples[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def clean_env(**extra: str) -> dict[str, str]:
    """The current environment without knightcode settings, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNIGHTCODE_")}
    env.update(extra)
    return env


def ensure_bytecode() -> None:
    """Compile knightcode's sources to bytecode, as an installed copy has.

    An editable install gets its ``.pyc`` files on first import, unless PYTHONDONTWRITEBYTECODE is
    set (it is in some sandboxes), in which case every run would compile ~100 modules (~100 ms)
    and start-up figures would measure the compiler, not knightcode.
    """
    import compileall
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for folder in ("core", "builtin_plugins"):
        compileall.compile_dir(str(root / folder), quiet=1)
