"""An example extension: compaction summaries written by a different (cheaper, faster) model.

Load it for one run with ``knightcode -e plugins_examples/custom_compaction.py --compaction-model
provider/model-id``, or copy it into ``~/.knightcode/agent/extensions/``.

It answers ``session_before_compact``: instead of the default checkpoint of the old messages,
it asks the ``--compaction-model`` for one summary of *everything* being compacted (the history
and the early part of a split user-message span), keeps the same recent messages as the default
would, and hands the summary back together with the request's usage so session totals include
it. Without the flag, or when anything goes wrong, it returns nothing and the built-in
compaction runs as usual. See docs/compaction.md ("Custom summarization via plugins").
"""

from __future__ import annotations

from collections.abc import Callable

from knightcode import (
    AbortSignal,
    CompactionOverride,
    CompactionPreparation,
    Context,
    HookContext,
    Model,
    ModelRegistry,
    StreamOptions,
    Usage,
    UserMessage,
    content_text,
    convert_to_llm,
    hookimpl,
    serialize_conversation,
)

PROMPT = """Summarize the conversation in the <conversation> tags. The summary replaces the \
whole conversation, so include everything needed to continue the work: the goals, the \
decisions and why they were made, the files and code that changed, the state of unfinished \
work, open problems, and the next steps. Use markdown sections.{previous}

<conversation>
{conversation}
</conversation>"""


@hookimpl
def register_flags(register: Callable[..., None]) -> None:
    """``--compaction-model provider/id``."""
    register(
        name="compaction-model",
        type="string",
        default=None,
        description=(
            "provider/model-id that writes compaction summaries (custom_compaction example)."
        ),
    )


async def summarize(
    model: Model, registry: ModelRegistry, text: str, signal: AbortSignal
) -> tuple[str, Usage]:
    """One request to ``model``: the summary text and the request's usage."""
    user: UserMessage = {
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "timestamp": 0,
    }
    # A one-off prompt: writing it to the provider's prompt cache would only cost more.
    options = StreamOptions(
        signal=signal, max_tokens=min(8192, model.max_tokens), cache_retention="none"
    )
    async for event in registry.stream(model, Context(messages=[user]), options):
        if event["type"] == "error":
            raise RuntimeError(event["error"].get("errorMessage") or "the summary request failed")
        if event["type"] == "done":
            message = event["message"]
            return content_text(message["content"]), message["usage"]
    raise RuntimeError("the summary request ended without an answer")


@hookimpl
async def session_before_compact(
    preparation: CompactionPreparation, signal: AbortSignal, ctx: HookContext
) -> CompactionOverride | None:
    """Summarize everything being compacted with the ``--compaction-model``."""
    reference = ctx.flags["compaction-model"]
    registry = ctx.model_registry
    if not isinstance(reference, str) or not reference or registry is None:
        return None  # no model chosen: the built-in compaction does its usual job
    try:
        model = await registry.resolve(reference, signal=signal)
        messages = [*preparation.messages_to_summarize, *preparation.turn_prefix_messages]
        previous = preparation.previous_summary
        text = PROMPT.format(
            conversation=serialize_conversation(convert_to_llm(messages)),
            previous=f"\n\nThe summary of the conversation before it:\n{previous}"
            if previous
            else "",
        )
        ctx.ui.notify(f"custom_compaction: summarizing {len(messages)} messages with {model.ref}")
        summary, usage = await summarize(model, registry, text, signal)
    except Exception as error:
        ctx.ui.notify(f"custom_compaction: {error}; using the built-in compaction", "warning")
        return None
    if not summary.strip():
        return None
    return CompactionOverride(
        summary=summary,
        first_kept_entry_id=preparation.first_kept_entry_id,
        tokens_before=preparation.tokens_before,
        usage=usage,
        details={"model": model.ref},
    )
