"""``/model`` (``app.model.select``): choose the model, searching provider, id and name.

Unlike the reference, which lists only models with credentials, models that cannot be used now
are listed too, greyed with the reason (no API key, server down), so the user learns why a model
is missing; they cannot be chosen. Confirm picks the model for the session; ``app.models.save``
picks it and asks the app to save it as the default (``defaultProvider``/``defaultModel``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text

from knightcode._keys.actions import MODEL_SELECTOR, SELECT
from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.dialogs.base import (
    ACCENT,
    MUTED,
    SUCCESS,
    ListDialog,
)

__all__ = ["ModelChoice", "ModelItem", "ModelSelector", "format_context_window"]


@dataclass(frozen=True)
class ModelItem:
    """One model as listed.

    :param context_window: tokens, when known
    :param available: whether it can be used now
    :param reason: why it cannot (shown when not available)
    :param current: whether it is the session's model
    """

    provider: str
    id: str
    name: str = ""
    context_window: int | None = None
    available: bool = True
    reason: str | None = None
    current: bool = False

    @property
    def full_id(self) -> str:
        """``provider/id``, the form of ``enabledModels`` and ``--model``."""
        return f"{self.provider}/{self.id}"


@dataclass(frozen=True)
class ModelChoice:
    """The chosen model, and whether to save it as the default."""

    item: ModelItem
    save: bool = False


def format_context_window(tokens: int | None) -> str:
    """``128k``, ``1M``, ``""`` when unknown."""
    if not tokens:
        return ""
    if tokens >= 1_000_000 and tokens % 100_000 == 0:
        return f"{tokens / 1_000_000:g}M"
    if tokens >= 1000:
        return f"{round(tokens / 1000)}k"
    return str(tokens)


def _order(items: Sequence[ModelItem]) -> list[ModelItem]:
    # The current model first, then usable ones, then the rest; by provider within each (stable,
    # so the registry's order of a provider's models is kept), as the reference sorts.
    return sorted(items, key=lambda m: (not m.current, not m.available, m.provider))


class ModelSelector(ListDialog[ModelItem, ModelChoice]):
    """See the module docstring.

    :param items: every model to list
    :param scoped: the list is the ``--models``/``enabledModels`` scope (changes the hint)
    :param query: an initial search (``/model gpt``)
    """

    contexts = (MODEL_SELECTOR, SELECT)
    empty_text = "  No matching models"

    def __init__(
        self,
        items: Sequence[ModelItem],
        *,
        scoped: bool = False,
        query: str = "",
        keys: KeyRegistry | None = None,
    ) -> None:
        self.scoped = scoped
        ordered = _order(items)
        self._id_width = max((len(m.id) for m in ordered), default=0)
        self._provider_width = max((len(m.provider) for m in ordered), default=0)
        super().__init__("Select model", ordered, keys=keys, query=query)

    def search_text(self, item: ModelItem) -> str:
        """Id, provider and name."""
        return f"{item.id} {item.provider} {item.name}"

    def render_item(self, item: ModelItem, selected: bool) -> Text:
        """Id, provider, name, context window; ✓ for the current one; the reason when unusable."""
        style = ACCENT if selected and item.available else ("" if item.available else MUTED)
        row = Text(item.id.ljust(self._id_width), style=style)
        row.append("  " + item.provider.ljust(self._provider_width), style=MUTED)
        if item.name and item.name != item.id:
            row.append("  " + item.name, style=MUTED)
        window = format_context_window(item.context_window)
        if window:
            row.append(f"  {window}", style=MUTED)
        if item.current:
            row.append(" ✓", style=SUCCESS)
        if not item.available:
            row.append(f"  ({item.reason or 'unavailable'})", style=MUTED + " italic")
        return row

    def hint_text(self) -> str:
        """Where the list comes from and the keys."""
        source = "models of the --models scope" if self.scoped else "all models"
        save = ", ".join(self.keys.keys_for("app.models.save")) or "(unbound)"
        return f"{source} · enter use · {save} use and save as default · esc cancel"

    async def perform(self, action: str) -> bool:
        """``app.models.save`` picks and saves; the rest as any list."""
        if action == "app.models.save":
            item = self.current
            if item is not None and item.available:
                self.resolve(ModelChoice(item, save=True))
            return True
        return await super().perform(action)

    async def confirm(self, item: ModelItem) -> None:
        """An unavailable model cannot be chosen."""
        if item.available:
            self.resolve(ModelChoice(item))
