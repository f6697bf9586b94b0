"""The compaction budgets in force for one model (``compaction`` plus ``modelOverrides``).

Resolution, per ``spec/compaction.md`` "Per-model overrides":

* the override key is the exact, case-sensitive ``provider/modelId`` (model ids may contain
  slashes, so the key is built, never split);
* ``reserveTokens`` and ``keepRecentTokens`` each fall back on their own: matching override →
  ordinary ``compaction`` value → built-in default;
* only *omitted* values fall back. An invalid ordinary value is an error even when the override
  supplies a valid one, and an invalid value in the matching override is an error too; values in
  overrides of other models are not looked at;
* every override entry must be an object, whichever model is active;
* ``enabled`` is global: an override that sets it is rejected rather than silently ignored;
* a ``reserveTokens`` that no file sets shrinks to fit small windows (:meth:`for_window`):
  min(16384, 30% of the window), so a 4k or 8k local model compacts only when it must. A value
  the user sets is kept as the spec says, whatever the window.

Works on the raw merged JSON so it needs no pydantic and is judged by the same checks as the
settings model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from knightcode._config.values import (
    InvalidSetting,
    check_bool,
    check_non_negative_int,
    check_object,
    expect,
)

DEFAULT_RESERVE_TOKENS = 16384
DEFAULT_KEEP_RECENT_TOKENS = 20000

# The share of the window kept free when reserveTokens is not set: the default reserve is
# meant for 128k+ windows, and an 8k model would otherwise compact after every turn.
SMALL_WINDOW_RESERVE_SHARE = 0.3

_BUDGETS = ("reserveTokens", "keepRecentTokens")


@dataclass(frozen=True)
class CompactionSettings:
    """Compaction settings resolved for one model.

    :param enabled: whether automatic compaction runs (global, never per model)
    :param reserve_tokens: tokens kept free below the context window; compaction starts when the
        context grows past ``window - reserve_tokens``
    :param keep_recent_tokens: recent tokens kept verbatim after a compaction
    :param reserve_tokens_set: whether a settings file set ``reserveTokens`` (ordinary value or
        this model's override); when not, :meth:`for_window` fits the default to the window
    """

    enabled: bool = True
    reserve_tokens: int = DEFAULT_RESERVE_TOKENS
    keep_recent_tokens: int = DEFAULT_KEEP_RECENT_TOKENS
    reserve_tokens_set: bool = False

    def for_window(self, context_window: int) -> CompactionSettings:
        """These settings for a model with ``context_window`` tokens: an unset reserve becomes
        min(default, 30% of the window); a set one, or an unknown window (0), is kept.
        """
        if self.reserve_tokens_set or context_window <= 0:
            return self
        fitted = min(self.reserve_tokens, int(context_window * SMALL_WINDOW_RESERVE_SHARE))
        return replace(self, reserve_tokens=fitted)


def resolve_compaction(
    section: object, provider: str | None, model_id: str | None
) -> CompactionSettings:
    """The compaction settings for ``provider/model_id`` from the merged ``compaction`` value.

    :param section: the merged ``compaction`` value (None when no file sets it)
    :param provider: the active model's provider; with ``model_id`` None, overrides are skipped
    :param model_id: the active model's id
    :raises InvalidSetting: a bad ordinary value, a non-object override entry, or a bad value in
        the matching override, with the JSON key path of the culprit
    """
    if section is None:
        return CompactionSettings()
    compaction: Mapping[str, object] = expect(section, check_object, dict, ("compaction",))

    enabled = True
    if "enabled" in compaction:
        enabled = expect(compaction["enabled"], check_bool, bool, ("compaction", "enabled"))
    # Ordinary values are validated whether or not an override shadows them: a typo in the
    # shared budget must not hide until the user switches model.
    resolved: dict[str, int] = {
        "reserveTokens": DEFAULT_RESERVE_TOKENS,
        "keepRecentTokens": DEFAULT_KEEP_RECENT_TOKENS,
    }
    for key in _BUDGETS:
        if key in compaction:
            resolved[key] = expect(
                compaction[key], check_non_negative_int, int, ("compaction", key)
            )

    reserve_set = "reserveTokens" in compaction
    override = _matching_override(compaction, provider, model_id)
    if override is not None:
        name, entry = override
        where = ("compaction", "modelOverrides", name)
        if "enabled" in entry:
            raise InvalidSetting(
                (*where, "enabled"),
                "enabled is not model-specific; set compaction.enabled instead",
            )
        for key in _BUDGETS:
            if key in entry:
                resolved[key] = expect(entry[key], check_non_negative_int, int, (*where, key))
        reserve_set = reserve_set or "reserveTokens" in entry

    return CompactionSettings(
        enabled=enabled,
        reserve_tokens=resolved["reserveTokens"],
        keep_recent_tokens=resolved["keepRecentTokens"],
        reserve_tokens_set=reserve_set,
    )


def _matching_override(
    section: Mapping[str, object], provider: str | None, model_id: str | None
) -> tuple[str, Mapping[str, object]] | None:
    """The override entry of the active model after checking that every entry is an object."""
    if "modelOverrides" not in section:
        return None
    where = ("compaction", "modelOverrides")
    overrides: Mapping[str, object] = expect(section["modelOverrides"], check_object, dict, where)
    entries: dict[str, Mapping[str, object]] = {
        name: expect(entry, check_object, dict, (*where, name)) for name, entry in overrides.items()
    }
    if provider is None or model_id is None:
        return None
    name = f"{provider}/{model_id}"
    entry = entries.get(name)
    return None if entry is None else (name, entry)
