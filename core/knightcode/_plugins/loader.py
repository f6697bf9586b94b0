"""Importing one plugin, isolated: whatever it raises becomes a one-line reason, never a crash.

``KeyboardInterrupt`` is the one case that needs telling apart: raised by the plugin's own code
it is a load failure like any other exception; caused by the user pressing Ctrl-C while a slow
plugin loads (:func:`noting_interrupts` tells) it stops knightcode with
:class:`LoadInterrupted`, which names the plugin, exit status 130.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from pathlib import Path
from types import FrameType, ModuleType

from knightcode._errors import KnightcodeError
from knightcode._plugins.discovery import Candidate
from knightcode._plugins.source_imports import FreshSourceLoader, add_extension_root

MODULE_PREFIX = "knightcode_ext_"


class LoadInterrupted(KnightcodeError):
    """The user interrupted knightcode (Ctrl-C) while a plugin was loading."""

    exit_code = 130

    def __init__(self, plugin: str) -> None:
        super().__init__(f"interrupted while loading plugin {plugin}")


class _Interrupts:
    """Whether a SIGINT arrived since :func:`noting_interrupts` began (see the module doc)."""

    seen = False

    @classmethod
    def handle(cls, _signum: int, _frame: FrameType | None) -> None:
        cls.seen = True
        raise KeyboardInterrupt


@contextlib.contextmanager
def noting_interrupts() -> Iterator[None]:
    """Within the block, a SIGINT raises ``KeyboardInterrupt`` as usual, and is noted, so that
    :func:`user_interrupted` can tell it from a plugin raising ``KeyboardInterrupt`` itself.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _Interrupts.seen = False
    previous = signal.signal(signal.SIGINT, _Interrupts.handle)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def user_interrupted() -> bool:
    """Whether the ``KeyboardInterrupt`` being handled came from the user's Ctrl-C."""
    return _Interrupts.seen


def module_name_for(path: Path) -> str:
    """A module name unique to this extension path.

    Two extensions may share a file name (``~/.knightcode/agent/extensions/tools.py`` and
    ``.knightcode/extensions/tools.py``), so the name carries a hash of the full path.
    """
    digest = hashlib.sha1(str(path).encode("utf-8", "surrogateescape")).hexdigest()[:10]
    stem = "".join(ch if ch.isalnum() else "_" for ch in path.stem)
    return f"{MODULE_PREFIX}{stem}_{digest}"


def describe_exception(error: BaseException, path: Path | None = None) -> str:
    """One line saying what went wrong and where, e.g.
    ``SyntaxError: invalid syntax (x.py, line 3)``.
    """
    if isinstance(error, SyntaxError):
        where = f" ({Path(error.filename).name if error.filename else '?'}, line {error.lineno})"
        return f"SyntaxError: {error.msg}{where}"
    frames = traceback.extract_tb(error.__traceback__)
    location = ""
    # Point at the deepest frame inside the plugin itself, not at importlib's machinery.
    for frame in reversed(frames):
        if path is None or frame.filename.startswith(str(path)):
            location = f" ({Path(frame.filename).name}, line {frame.lineno})"
            break
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}{': ' + text if text else ''}{location}"


def import_extension(path: Path) -> ModuleType:
    """Import an extension file or package folder under a private module name.

    The module is placed in ``sys.modules`` before it runs (dataclasses and pickling need that)
    and removed again if it fails, so a retry after an edit starts clean. It and everything it
    imports from its own folder come from ``.py`` source, never from bytecode (see
    :mod:`knightcode._plugins.source_imports`).
    """
    name = module_name_for(path)
    file = path / "__init__.py" if path.is_dir() else path
    add_extension_root(path if path.is_dir() else path.parent)
    spec = importlib.util.spec_from_file_location(
        name,
        file,
        loader=FreshSourceLoader(name, str(file)),
        submodule_search_locations=[str(path)] if path.is_dir() else None,
    )
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        forget_extension_modules(path)
        raise
    return module


def forget_extension_modules(path: Path) -> None:
    """Drop an extension's module and its submodules from ``sys.modules`` (for reload)."""
    name = module_name_for(path)
    for key in [key for key in sys.modules if key == name or key.startswith(name + ".")]:
        del sys.modules[key]


def load_candidate(candidate: Candidate) -> object:
    """The plugin object of a candidate: the imported module, or the entry point's target."""
    if candidate.entry_point is not None:
        return candidate.entry_point.load()
    assert candidate.path is not None
    return import_extension(candidate.path)


def source_stamp(path: Path) -> tuple[tuple[str, int, int], ...]:
    """(file, mtime_ns, size) of every ``.py`` file of an extension, to notice edits cheaply."""
    files: list[Path]
    if path.is_dir():
        files = []
        for root, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
            files.extend(Path(root) / n for n in sorted(names) if n.endswith(".py"))
    else:
        files = [path]
    stamp = []
    for file in files:
        try:
            info = file.stat()
        except OSError:
            continue
        stamp.append((str(file), info.st_mtime_ns, info.st_size))
    return tuple(stamp)
