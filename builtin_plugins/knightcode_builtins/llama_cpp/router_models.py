"""The router's model list, read as the router reports it, and turned into knightcode models.

``GET /models`` in router mode lists every model the router can serve, with a ``status``
(``unloaded``, ``loading``, ``loaded``, ``sleeping``, ``downloading`` …), a ``failed`` flag and
``exit_code`` after a failed load, and, once a model has been loaded, ``meta.n_ctx``: the context
window the model really runs with. That number — not a guess from the model's name — becomes the
knightcode model's ``context_window``, so compaction thresholds match the server.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from knightcode import DiscoveredModels, Model
from knightcode_builtins.llama_cpp.connection import PROVIDER, Connection

__all__ = [
    "CLASSIFY_API",
    "PLACEHOLDER_CONTEXT",
    "SYSTEM_ONE_API",
    "RouterModel",
    "discovered_models",
]

SYSTEM_ONE_API = "typesafe-system-one"
"""API of decision models: they answer through ``POST /v1/systemone``."""
CLASSIFY_API = "llama-cpp-classify"
"""API of chat models used as classifiers: answers read from next-token probabilities."""
PLACEHOLDER_CONTEXT = 4096
"""Context window of a model that was never loaded and whose preset sets no ``-c``: the router
does not know ``n_ctx`` before a load. Selecting such a model loads it (autoload) and the real
value replaces this one at once."""

_SELECTABLE = ("loaded", "sleeping")


@dataclass(frozen=True)
class RouterModel:
    """One entry of ``GET /models``.

    :param n_ctx: the running context window (``meta.n_ctx``, present once loaded), else the
        ``-c``/``--ctx-size`` the router will start it with, else None
    :param decision: ``architecture.output_modalities`` contains ``decisions`` (llama.cpp 0.6+)
    :param path: the GGUF file the router starts the model with (from ``status.args``)
    """

    id: str
    status: str
    failed: bool = False
    exit_code: int | None = None
    n_ctx: int | None = None
    loaded_ctx: bool = False
    decision: bool = False
    images: bool = False
    source: str | None = None
    path: str | None = None
    progress: float | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> RouterModel:
        """An entry of the ``data`` list of ``GET /models``; missing fields get defaults."""
        status = _mapping(data.get("status"))
        args = [str(arg) for arg in _list(status.get("args"))]
        meta = _mapping(data.get("meta"))
        arch = _mapping(data.get("architecture"))
        running_ctx = meta.get("n_ctx")
        n_ctx = running_ctx if isinstance(running_ctx, int) else None
        configured = _int(_arg(args, "-c", "--ctx-size"))
        progress = status.get("progress")
        exit_code = status.get("exit_code")
        return cls(
            id=str(data.get("id", "")),
            status=str(status.get("value", "unknown")),
            failed=bool(status.get("failed", False)),
            exit_code=exit_code if isinstance(exit_code, int) else None,
            n_ctx=n_ctx or configured or None,
            loaded_ctx=bool(n_ctx),
            decision="decisions" in _list(arch.get("output_modalities")),
            images="image" in _list(arch.get("input_modalities")),
            source=str(data["source"]) if data.get("source") else None,
            path=_arg(args, "-m", "--model"),
            progress=_progress(progress),
        )

    @property
    def selectable(self) -> bool:
        """Loaded or sleeping: usable at once (a sleeping model wakes on its first request)."""
        return self.status in _SELECTABLE

    def describe(self) -> str:
        """A short state for lists: ``loaded · 2048 ctx``, ``unloaded (last load failed)``."""
        text = self.status
        if self.status in ("loading", "downloading") and self.progress is not None:
            text += f" {self.progress:.0%}"
        if self.selectable and self.loaded_ctx:
            text += f" · {self.n_ctx} ctx"
        if self.decision:
            text += " · decision model"
        if self.failed and self.status == "unloaded":
            text += f" (last load failed, exit code {self.exit_code})"
        return text


def _arg(args: Sequence[str], *names: str) -> str | None:
    for index, arg in enumerate(args[:-1]):
        if arg in names:
            return args[index + 1]
    return None


def _int(value: str | None) -> int | None:
    try:
        number = int(value) if value is not None else 0
    except ValueError:
        return None
    return number if number > 0 else None


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


def _progress(value: object) -> float | None:
    # The router reports progress as a number or as {"value": 0.4, "stages": [...]}.
    if isinstance(value, Mapping):
        value = value.get("value")
    return float(value) if isinstance(value, (int, float)) else None


def discovered_models(
    router_models: Sequence[RouterModel], connection: Connection, autoload: bool
) -> DiscoveredModels:
    """The knightcode models for a router's list.

    Loaded and sleeping models are selectable; with autoload on, unloaded ones too (the first
    request loads them). With autoload off, unloaded chat models are listed as *not ready*
    (in ``models`` and, with the command that loads them, in ``unavailable``): knightcode can
    start on one, and ``/llama load`` makes it ready. Chat models appear twice: as a chat
    model and, with the same id, as a ``llama-cpp-classify`` classifier. Decision models
    appear only as ``typesafe-system-one`` classifiers. Everything else is listed in
    ``unavailable`` with the reason.
    """
    models: list[Model] = []
    unavailable: dict[str, str] = {}
    # Ready models first (loaded, sleeping), in the router's order otherwise: a default pick
    # (``--provider llama.cpp`` alone) takes a loaded model even when autoload makes all usable.
    for entry in sorted(router_models, key=lambda model: not model.selectable):
        usable = entry.selectable or (autoload and entry.status in ("unloaded", "loading"))
        if entry.decision:
            unavailable[entry.id] = (
                "it is a decision model: it answers only as a classifier "
                "(ctx.model_registry.classify), not in a chat"
            )
            if usable:
                models.append(_model(entry, connection, "classifier", SYSTEM_ONE_API))
            continue
        if not usable:
            unavailable[entry.id] = _why_not(entry)
            if entry.status in ("unloaded", "loading"):
                # not ready, but choosable by name: knightcode starts on it and /llama loads it
                models.append(_model(entry, connection, "chat", "openai-completions"))
            continue
        models.append(_model(entry, connection, "chat", "openai-completions"))
        models.append(_model(entry, connection, "classifier", CLASSIFY_API))
    return DiscoveredModels(models, unavailable)


def _why_not(entry: RouterModel) -> str:
    if entry.status == "unloaded":
        failed = " (its last load failed)" if entry.failed else ""
        return (
            f"it is not loaded{failed} and the router does not load models on demand "
            f"(--no-models-autoload): load it with /llama load {entry.id} (from the shell: "
            f'knightcode --model llama.cpp/{entry.id} -p "/llama load {entry.id}" "your prompt")'
        )
    return f"it is {entry.status} on the router; wait for it or check /llama"


def _model(entry: RouterModel, connection: Connection, kind: str, api: str) -> Model:
    window = entry.n_ctx or PLACEHOLDER_CONTEXT
    return Model(
        provider=PROVIDER,
        id=entry.id,
        name=entry.id,
        api=api,
        # The OpenAI client appends /chat/completions; the router routes by the "model" field.
        base_url=connection.base_url + "/v1",
        context_window=window,
        max_tokens=min(window, 16384),
        input=("text", "image") if entry.images else ("text",),
        compat={"supportsDeveloperRole": False, "supportsStore": False},
        kind="classifier" if kind == "classifier" else "chat",
    )
