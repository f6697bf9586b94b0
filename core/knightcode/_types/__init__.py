"""The shapes knightcode's data takes — messages, session entries, stream and session events —
as ``TypedDict`` definitions shared by every subsystem; re-exported from :mod:`knightcode`.
"""
