"""Packages: ``knightcode install`` sources, their settings entries and their resources.

:func:`knightcode._packages.resources.package_resource_paths` is what resource loaders use.
"""
