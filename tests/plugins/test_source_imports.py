"""Which directories under an extension root import from source only.

A subprocess each: the import system's state (path hooks, caches) is process-wide.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from pathlib import Path
from knightcode._plugins.source_imports import add_extension_root
project = Path(sys.argv[1])
add_extension_root(project)
sys.path.append(str(project / "later"))
import installed_mod, later_mod
print(type(installed_mod.__loader__).__name__, type(later_mod.__loader__).__name__)
"""


def test_startup_path_entries_under_a_root_keep_normal_imports(tmp_path: Path) -> None:
    """A project's ``.venv`` lies under the folder ``-e ./ext.py`` makes a root; what was on
    ``sys.path`` at start-up is installed code and keeps bytecode caching, while a directory
    added later (by an extension) is source-only."""
    site = tmp_path / ".venv" / "site-packages"
    site.mkdir(parents=True)
    (site / "installed_mod.py").write_text("VALUE = 1\n")
    (tmp_path / "later").mkdir()
    (tmp_path / "later" / "later_mod.py").write_text("VALUE = 2\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert done.stdout.split() == ["SourceFileLoader", "FreshSourceLoader"]
