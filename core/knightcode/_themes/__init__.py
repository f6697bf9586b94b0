"""Themes: theme files (the reference's format), their validation, discovery and selection.

:mod:`.tokens` lists the colour tokens, :mod:`.loader` reads and validates a file,
:mod:`.build` turns it into the renderers' ``Theme`` (:mod:`..render.theme`),
:mod:`.builtin` holds ``dark`` and ``light``, :mod:`.discovery` finds the others and picks one.
"""
