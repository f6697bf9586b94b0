"""The one exception a tool raises to report failure to the model."""

from __future__ import annotations

__all__ = ["OPERATION_ABORTED", "ToolError"]

OPERATION_ABORTED = "Operation aborted"
"""The message every tool fails with when the run is aborted (the reference's exact text)."""


class ToolError(Exception):
    """A tool failed; the agent turns this into an error tool result.

    :param message: the text the model sees as the tool result, so it should say what to do next
    :param details: optional structured data kept beside the result (not sent to the model)
    """

    def __init__(self, message: str, details: object = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return self.message
