"""Selectors and dialogs: widgets mounted in place of the editor that resolve a result.

Each module takes plain data and callbacks (no agent), so the app builds the items and acts on
the answer; :func:`~knightcode._modes.interactive.dialogs.base.ask` mounts one and awaits it.
"""
