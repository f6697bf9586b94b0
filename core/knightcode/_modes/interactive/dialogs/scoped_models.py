"""``/scoped-models``: which models ``app.model.cycleForward`` cycles through, and in what order.

As in the reference, the enabled set is either *all* (``None``: no ``enabledModels``, future
models included) or an explicit ordered list; enabled models are listed first, in cycle order.
Changes apply to the session at once (``on_change``); ``app.models.save`` resolves the dialog
with the selection for the app to save as ``enabledModels``; cancel keeps the session's changes
unsaved and resolves ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from rich.text import Text

from knightcode._keys.actions import SCOPED_MODELS, SELECT
from knightcode._keys.registry import KeyRegistry
from knightcode._modes.interactive.dialogs.base import (
    ACCENT,
    DIM,
    MUTED,
    SUCCESS,
    WARNING,
    ListDialog,
)
from knightcode._modes.interactive.dialogs.model_selector import ModelItem

__all__ = ["ScopedModels", "ScopedModelsSelector"]

Enabled = list[str] | None
"""Full ids (``provider/id``) in cycle order, or None for all models."""


@dataclass(frozen=True)
class ScopedModels:
    """The saved selection: ``enabled`` is the ordered list of full ids, None for all."""

    enabled: Enabled


def _toggle(enabled: Enabled, model: str) -> Enabled:
    if enabled is None:
        return [model]  # the first toggle starts a list of just this one, as the reference
    if model in enabled:
        return [m for m in enabled if m != model]
    return [*enabled, model]


def _enable(enabled: Enabled, all_ids: list[str], targets: Collection[str] | None) -> Enabled:
    if enabled is None:
        return None
    result = list(enabled)
    result.extend(m for m in (all_ids if targets is None else targets) if m not in result)
    return None if len(result) == len(all_ids) else result


def _clear(enabled: Enabled, all_ids: list[str], targets: Collection[str] | None) -> Enabled:
    if enabled is None:
        return [] if targets is None else [m for m in all_ids if m not in targets]
    drop = set(enabled if targets is None else targets)
    return [m for m in enabled if m not in drop]


class ScopedModelsSelector(ListDialog[ModelItem, ScopedModels]):
    """See the module docstring.

    :param items: every model that can be enabled
    :param enabled: the current selection (None: all; a set is ordered as ``items``)
    :param on_change: called with each new selection (session-only until saved)
    """

    contexts = (SCOPED_MODELS, SELECT)
    empty_text = "  No matching models"
    max_visible = 15

    def __init__(
        self,
        items: Sequence[ModelItem],
        enabled: Collection[str] | None,
        *,
        on_change: Callable[[Enabled], None] | None = None,
        keys: KeyRegistry | None = None,
    ) -> None:
        self._by_id = {m.full_id: m for m in items}
        self._all_ids = list(self._by_id)
        if enabled is None:
            self.enabled: Enabled = None
        elif isinstance(enabled, list | tuple):
            self.enabled = [m for m in enabled if m in self._by_id]
        else:
            self.enabled = [m for m in self._all_ids if m in enabled]
        self._on_change = on_change
        self.dirty = False
        super().__init__("Model configuration", self._ordered(), keys=keys)

    def _ordered(self) -> list[ModelItem]:
        if self.enabled is None:
            ids = self._all_ids
        else:
            chosen = set(self.enabled)
            ids = [*self.enabled, *(m for m in self._all_ids if m not in chosen)]
        return [self._by_id[m] for m in ids]

    def is_enabled(self, item: ModelItem) -> bool:
        """Whether ``item`` is in the cycle."""
        return self.enabled is None or item.full_id in self.enabled

    def search_text(self, item: ModelItem) -> str:
        """Id and provider."""
        return f"{item.id} {item.provider}"

    def render_item(self, item: ModelItem, selected: bool) -> Text:
        """Id, provider badge, ✓/✗."""
        row = Text(item.id, style=ACCENT if selected else "")
        row.append(f" [{item.provider}]", style=MUTED)
        if self.is_enabled(item):
            row.append(" ✓", style=SUCCESS)
        else:
            row.append(" ✗", style=DIM)
        return row

    def render_body(self) -> Text:
        """The list, then the count and whether it is saved."""
        body = Text("\n").join(self.render_rows())
        count = (
            "all enabled"
            if self.enabled is None
            else f"{len(self.enabled)}/{len(self._all_ids)} enabled"
        )
        body.append(f"\n  {count}", style=MUTED)
        if self.dirty:
            body.append(" (unsaved)", style=WARNING)
        return body

    def hint_text(self) -> str:
        """The keys, as bound."""

        def key(action: str) -> str:
            return (self.keys.keys_for(action) or ("(unbound)",))[0]

        return " · ".join(
            (
                f"{key('tui.select.confirm')} toggle",
                f"{key('app.models.enableAll')} all",
                f"{key('app.models.clearAll')} clear",
                f"{key('app.models.toggleProvider')} provider",
                f"{key('app.models.reorderUp')}/{key('app.models.reorderDown')} reorder",
                f"{key('app.models.save')} save",
            )
        )

    def _targets(self) -> list[str] | None:
        # With a search, the bulk actions act on the matching models only.
        return [m.full_id for m in self.shown] if self.query_text.strip() else None

    def _changed(self, enabled: Enabled, keep: ModelItem | None) -> None:
        self.enabled = enabled
        self.dirty = True
        self.items = self._ordered()
        self.refilter(keep)
        if self._on_change is not None:
            self._on_change(None if enabled is None else list(enabled))

    async def perform(self, action: str) -> bool:
        """Every action of the scopedModels context."""
        item = self.current
        if action == "app.models.enableAll":
            self._changed(_enable(self.enabled, self._all_ids, self._targets()), item)
        elif action == "app.models.clearAll":
            self._changed(_clear(self.enabled, self._all_ids, self._targets()), item)
        elif action == "app.models.toggleProvider":
            if item is not None:
                ids = [m for m in self._all_ids if self._by_id[m].provider == item.provider]
                on = all(self.is_enabled(self._by_id[m]) for m in ids)
                change = _clear if on else _enable
                self._changed(change(self.enabled, self._all_ids, ids), item)
        elif action in ("app.models.reorderUp", "app.models.reorderDown"):
            if item is not None and self.is_enabled(item):
                self._move(item, -1 if action == "app.models.reorderUp" else 1)
        elif action == "app.models.save":
            self.resolve(ScopedModels(None if self.enabled is None else list(self.enabled)))
        elif action == "tui.select.cancel" and self.query_text:
            self.set_query("")  # cancel clears a search first
        else:
            return await super().perform(action)
        return True

    def _move(self, item: ModelItem, delta: int) -> None:
        order = list(self._all_ids) if self.enabled is None else list(self.enabled)
        index = order.index(item.full_id)
        target = index + delta
        if not 0 <= target < len(order):
            return
        order[index], order[target] = order[target], order[index]
        self._changed(order, item)

    async def confirm(self, item: ModelItem) -> None:
        """Confirm toggles the model (the dialog ends with save or cancel)."""
        self._changed(_toggle(self.enabled, item.full_id), item)
