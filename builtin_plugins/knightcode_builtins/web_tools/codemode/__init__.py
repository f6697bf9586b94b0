"""Codemode: the model gets one ``code`` tool and writes a Python script that calls the other
tools as functions, in one step.

* ``tool.py``: the ``code`` tool — runs the script through the execution backend with a timeout
  and an output limit (``output.py``), and returns its output and a summary of its calls;
* ``runtime.py``: the script side (standard library only), copied next to the script;
* ``channel.py``/``serve.py``: the private request/response directory between script and host,
  and the host answering it — tool calls as nested calls (``ToolContext.call_tool``),
  ``classify`` through the model registry;
* ``functions.py``: tools' JSON schemas as function signatures, and their listing for the model;
* ``enable.py``: tools.json ``codemode.enabled`` / ``--codemode`` — only ``code`` is offered,
  the tools that were active become its functions.
"""
