"""Fixtures the web tools' tests share with other packages: ``rpc`` (a real ``knightcode --mode
rpc`` against the scripted model server, see ``tests/rpc/conftest.py``) for ``/tools``."""

from tests.rpc.conftest import rpc  # noqa: F401 (the fixture)
