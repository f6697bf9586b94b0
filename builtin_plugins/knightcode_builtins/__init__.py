"""knightcode's built-in plugins.

Each subpackage is an ordinary plugin registered through an entry point of the group
``knightcode.builtins`` and written against the public API in :mod:`knightcode` only, exactly as
a third-party plugin would be. None is imported by the kernel directly.
"""
