"""The keybinding layer of interactive mode: key syntax, the action table, the registry.

Independent of any UI library so that it can be tested (and used by tools listing the bindings)
without a terminal; :mod:`knightcode._keys.textual_keys` is the only module that knows Textual.
Nothing here is imported when ``-p``, JSON or RPC mode starts.
"""
