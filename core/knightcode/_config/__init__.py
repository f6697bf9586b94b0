"""Configuration: where knightcode keeps its files and what they say.

``paths`` locates the agent directory and a project's ``.knightcode/``; ``loading`` reads and merges
the global and project ``settings.json`` (validated by the tables in ``settings``, declared with
``schema``); ``trust`` decides whether a project's ``.knightcode/`` may be read at all;
``context_files`` and ``system_prompt`` gather the instructions that go into the system prompt;
``edit_settings`` makes the small, key-preserving edits that ``knightcode config`` needs.

This package deliberately imports nothing here: ``knightcode --help`` must stay cheap.
"""
