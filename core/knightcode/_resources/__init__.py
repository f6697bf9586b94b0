"""Skills and prompt templates: markdown files that become prompt text.

Skills (the Agent Skills standard) are listed in the system prompt so the model can read the one
a task needs, and ``/skill:name`` loads one explicitly; prompt templates become ``/name``
commands. Both are found in the agent directory, a trusted project's ``.knightcode/``, settings,
the command line and plugins (``resources_discover``); see :mod:`.discovery`.
"""
