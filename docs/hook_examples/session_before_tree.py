"""Steer the summary of a branch the user leaves with ``/tree``."""

from __future__ import annotations

from knightcode import Cancel, TreeNavigationOptions, TreePreparation, hookimpl


@hookimpl
def session_before_tree(preparation: TreePreparation) -> Cancel | TreeNavigationOptions | None:
    """Ask for the changed files and label the summary, when the user wants one."""
    if not preparation.user_wants_summary:
        return None
    return TreeNavigationOptions(
        custom_instructions="List every file that was changed on the abandoned branch.",
        label="explored",
    )
