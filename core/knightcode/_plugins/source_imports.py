"""Extensions are imported from their ``.py`` source only, never from bytecode.

Project trust fingerprints the source files a project can make knightcode run, and leaves
bytecode out: importing writes ``__pycache__``, and that must not withdraw trust. So bytecode
must never be what runs. Python's normal import system would run it in three ways a repository
can arrange: an unchecked-hash ``pkg/__pycache__/helper.cpython-311.pyc`` is used instead of
``helper.py`` whatever the source says; a directory holding only ``__init__.pyc`` imports as a
package; and a legacy ``helper.pyc`` with no ``helper.py`` beside it imports as a module.

Two routes were possible: fingerprint every ``.pyc`` as well (and never write bytecode there),
or never import bytecode from an extension's directories. The second is the robust one: it does
not depend on the fingerprint listing every cache file correctly, it needs no rule for bytecode
Python writes itself, and it removes the stale-cache problem (a cache validated by whole-second
mtime can hide an edit) along the way. So every directory that holds an extension — the folder
of an extension file, an extension package and everything below them — is an *extension root*:
a path hook placed first in :data:`sys.path_hooks` gives each directory under a root a finder
that knows ``.py`` sources (compiled from the source text every time, nothing read from or
written to ``__pycache__``) and native extension modules (which are ordinary files, fingerprinted
like any other), and nothing else. The hook serves both an extension package's own submodules
(found through the package's ``__path__``) and a directory an extension puts on ``sys.path``.

Directories that were on ``sys.path`` when knightcode started (the standard library, the
environment's ``site-packages``) are not extension code even when they lie under a root — a
project's ``.venv`` is under the project folder that ``-e ./ext.py`` makes a root — so they keep
Python's normal import (and its bytecode cache: compiling every installed package from source on
each start would cost seconds).
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
import threading
from pathlib import Path
from types import CodeType

_roots: frozenset[str] = frozenset()
"""Real paths of the extension roots. Replaced, never mutated, so the hook can read it from any
thread without the lock."""
_installed: frozenset[str] = frozenset()
"""Real paths of the ``sys.path`` entries at start-up that lie strictly under a root: installed
code, imported normally (same copy-on-write rule as ``_roots``)."""
_lock = threading.Lock()
_STARTUP_PATH = tuple(os.path.realpath(entry) for entry in sys.path if entry)


class FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compile a module from its source every time, without reading or writing bytecode.

    Bytecode caches are validated by whole-second mtime and size (or not at all, for an
    unchecked-hash ``.pyc``), so they could run code other than the source; and writing
    ``__pycache__`` into a user's extension folders is litter.
    """

    def get_code(self, fullname: str) -> CodeType:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


_LOADERS = (
    (importlib.machinery.ExtensionFileLoader, importlib.machinery.EXTENSION_SUFFIXES),
    (FreshSourceLoader, importlib.machinery.SOURCE_SUFFIXES),
)


def _within(real: str, directories: frozenset[str]) -> bool:
    return any(real == top or real.startswith(top.rstrip(os.sep) + os.sep) for top in directories)


def _under_a_root(directory: str, roots: frozenset[str]) -> bool:
    real = os.path.realpath(directory or os.getcwd())
    return _within(real, roots) and not _within(real, _installed)


def _installed_under(roots: frozenset[str]) -> frozenset[str]:
    """The start-up ``sys.path`` entries strictly below a root (an entry that *is* a root, such
    as the working folder under ``python -m``, stays source-only).
    """
    return frozenset(
        entry for entry in _STARTUP_PATH if entry not in roots and _within(entry, roots)
    )


def _source_only_hook(path: str) -> importlib.machinery.FileFinder:
    """The finder for a ``sys.path``/``__path__`` entry under an extension root.

    Any other entry is declined (``ImportError``), so Python's own hooks handle it as usual.
    An entry under a root that is not a directory (a zip file, say) gets a finder that finds
    nothing: zip archives can hold bytecode too.
    """
    if not _under_a_root(path, _roots):
        raise ImportError("not under an extension root")
    return importlib.machinery.FileFinder(path, *_LOADERS)


def add_extension_root(path: Path) -> None:
    """Make ``path`` (an extension package, or the folder of an extension file) and everything
    below it import from source only.

    Finders Python already cached for directories under it are dropped, so the next import
    there goes through the hook.
    """
    global _roots, _installed
    root = os.path.realpath(path)
    with _lock:
        if _source_only_hook not in sys.path_hooks:
            sys.path_hooks.insert(0, _source_only_hook)
        if root in _roots:
            return
        _roots = _roots | {root}
        _installed = _installed_under(_roots)
        for entry in list(sys.path_importer_cache):
            if _under_a_root(entry, frozenset((root,))):
                sys.path_importer_cache.pop(entry, None)
