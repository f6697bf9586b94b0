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
_lock = threading.Lock()


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


def _under_a_root(directory: str, roots: frozenset[str]) -> bool:
    real = os.path.realpath(directory or os.getcwd())
    return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


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
    global _roots
    root = os.path.realpath(path)
    with _lock:
        if _source_only_hook not in sys.path_hooks:
            sys.path_hooks.insert(0, _source_only_hook)
        if root in _roots:
            return
        _roots = _roots | {root}
        for entry in list(sys.path_importer_cache):
            if _under_a_root(entry, frozenset((root,))):
                sys.path_importer_cache.pop(entry, None)
