"""The pluggy markers of the ``knightcode`` project.

Plugins decorate their hook implementations with :data:`hookimpl`; :mod:`knightcode._hookspecs`
declares the hooks with :data:`hookspec`. Kept apart from the specs so that a plugin importing the
marker does not pay for parsing the whole catalogue.
"""

from __future__ import annotations

import pluggy

PROJECT_NAME = "knightcode"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
