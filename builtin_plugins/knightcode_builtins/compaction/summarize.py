"""Summary requests that always fit: retries, chunking and a size cap.

* **Retries.** A request that fails transiently (rate limit, 5xx, dropped stream) is retried with
  the agent's ``retry`` settings, reporting ``summarization_retry_scheduled`` (before the wait),
  ``summarization_retry_attempt_start`` (when the next attempt starts) and
  ``summarization_retry_finished`` (when the retried request finally succeeded or gave up).
* **Chunking.** When the conversation, the previous summary and the instructions would leave
  less than :data:`~knightcode._llm.summary.MIN_SUMMARY_TOKENS` of output room in the model's
  window, the conversation is split between messages (a tool result stays with its call) into
  pieces that fit; each piece is folded into the summary of the pieces before it. A single
  message larger than a piece is shortened in the middle. A provider that still reports an
  overflow gets pieces half the size, up to three times.
* **Size cap.** Summaries, and the previous summary fed back in, are capped at
  :func:`summary_cap_tokens`, so repeated compactions cannot grow the summary without bound. A
  caller storing several parts together (a split span's two summaries, the file lists) gives each
  part its share (``cap_tokens=``): the cap holds for what is stored. The cap is asked for in the
  prompt, is the request's output limit (``max_tokens``), and is enforced on the text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from knightcode import (
    MIN_SUMMARY_TOKENS,
    SUMMARIZATION_SYSTEM_PROMPT,
    UPDATE_PROMPT,
    SummarizationAborted,
    SummarizationError,
    backoff_delay_ms,
    build_summary_prompt,
    convert_to_llm,
    estimate_request_tokens,
    estimate_text_tokens,
    output_budget,
    request_summary,
    serialize_conversation,
)

if TYPE_CHECKING:
    from knightcode import (
        AbortSignal,
        AgentMessage,
        CompactionReason,
        LlmMessage,
        Model,
        ModelRegistry,
        RetrySettings,
        SessionEvent,
        SummaryResult,
        ThinkingLevel,
        Usage,
    )

__all__ = ["Summarizer", "add_usage", "cap_left", "cap_text", "summary_cap_tokens"]

_SHRINKS = 3


def summary_cap_tokens(context_window: int) -> int:
    """Largest summary kept: an eighth of the window, between 512 and 16384 tokens."""
    return max(512, min(16384, context_window // 8))


def cap_left(cap_tokens: int, *stored_with: str) -> int:
    """The tokens left of ``cap_tokens`` for generated text once the fixed parts stored with it
    (file lists, separators, a preamble) are counted.
    """
    return cap_tokens - sum(estimate_text_tokens(part) for part in stored_with)


def cap_text(text: str, cap_tokens: int) -> str:
    """``text`` shortened (at a line break when possible) to about ``cap_tokens`` tokens."""
    if estimate_text_tokens(text) <= cap_tokens:
        return text
    cut = text[: cap_tokens * 4 - 64]
    line = cut.rfind("\n")
    if line > len(cut) // 2:
        cut = cut[:line]
    return cut.rstrip() + f"\n\n[Summary shortened to about {cap_tokens} tokens.]"


def add_usage(total: Usage | None, usage: Usage) -> Usage:
    """The sum of two usages (token counts and costs)."""
    zero = {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": 0.0}
    if total is None:
        return {**usage, "cost": {**zero, **usage.get("cost", {})}}  # type: ignore[typeddict-item]
    total["input"] += usage["input"]
    total["output"] += usage["output"]
    total["cacheRead"] += usage["cacheRead"]
    total["cacheWrite"] += usage["cacheWrite"]
    total["totalTokens"] += usage["totalTokens"]
    cost = total.setdefault("cost", {**zero})  # type: ignore[typeddict-item]
    added = usage.get("cost")
    if added is not None:
        cost["input"] += added["input"]
        cost["output"] += added["output"]
        cost["cacheRead"] += added["cacheRead"]
        cost["cacheWrite"] += added["cacheWrite"]
        cost["total"] += added["total"]
    return total


def _units(messages: Sequence[AgentMessage]) -> list[str]:
    """The serialized conversation cut between messages, each tool result with its call."""
    groups: list[list[LlmMessage]] = []
    for message in convert_to_llm(list(messages)):
        if message["role"] == "toolResult" and groups:
            groups[-1].append(message)
        else:
            groups.append([message])
    return [text for text in map(serialize_conversation, groups) if text]


def _elide(text: str, limit_tokens: int) -> str:
    """``text`` with its middle left out so that it fits ``limit_tokens``."""
    budget = max(limit_tokens * 4 - 160, 400)
    while True:
        head, tail = budget * 2 // 3, budget // 3
        omitted = len(text) - head - tail
        shortened = (
            f"{text[:head]}\n\n[... {omitted} characters left out to fit the summarizer's "
            f"context window ...]\n\n{text[-tail:]}"
        )
        if estimate_text_tokens(shortened) <= limit_tokens or budget <= 400:
            return shortened
        budget = budget * 4 // 5


def _pack(units: Sequence[str], limit_tokens: int) -> list[str]:
    """Consecutive units joined into pieces of at most ``limit_tokens`` (estimated)."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for unit in units:
        tokens = estimate_text_tokens(unit)
        if tokens > limit_tokens:
            unit = _elide(unit, limit_tokens)
            tokens = estimate_text_tokens(unit)
        if current and size + tokens > limit_tokens:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(unit)
        size += tokens + 1
    if current or not chunks:
        chunks.append("\n\n".join(current))
    return chunks


@dataclass
class Summarizer:
    """The summary requests of one compaction or branch summary.

    :ivar model: the summarizing model (captured when the operation started)
    :ivar models: what streams requests (the model registry)
    :ivar signal: the operation's abort signal
    :ivar publish: sends session events (the retry events)
    :ivar source: ``"compaction"`` or ``"branchSummary"`` (``summarization_retry_attempt_start``)
    :ivar reason: the compaction reason, None for branch summaries
    :ivar retry: retry settings (``enabled``, ``max_retries``, ``base_delay_ms``, ``max_delay_ms``)
    :ivar thinking_level: the session's thinking level (reasoning models only)
    :ivar usage: the summed usage of the successful requests so far
    """

    model: Model
    models: ModelRegistry
    signal: AbortSignal
    publish: Callable[[SessionEvent], None]
    source: Literal["compaction", "branchSummary"]
    reason: CompactionReason | None
    retry: RetrySettings
    thinking_level: ThinkingLevel | None
    usage: Usage | None = None

    @property
    def cap_tokens(self) -> int:
        """The summary size cap for the model's window."""
        return summary_cap_tokens(int(self.model.context_window))

    async def summarize(
        self,
        messages: Sequence[AgentMessage],
        *,
        previous_summary: str | None = None,
        custom_instructions: str | None = None,
        instructions: str | None = None,
        cap_tokens: int | None = None,
    ) -> str:
        """Summarize ``messages`` (folded into ``previous_summary``), in pieces if needed.

        :param cap_tokens: the size of this summary, at most :attr:`cap_tokens` (the default)
        :raises SummarizationError: every attempt failed
        :raises SummarizationAborted: the signal was set
        """
        cap = self.cap_tokens if cap_tokens is None else min(cap_tokens, self.cap_tokens)
        units = _units(messages)
        previous = cap_text(previous_summary, self.cap_tokens) if previous_summary else None
        whole = self._prompt("\n\n".join(units), previous, custom_instructions, instructions, cap)
        limit = None if self._fits(whole) else self._piece_tokens(custom_instructions, instructions)
        for _ in range(_SHRINKS + 1):
            chunks = ["\n\n".join(units)] if limit is None else _pack(units, limit)
            try:
                return await self._fold(chunks, previous, custom_instructions, instructions, cap)
            except SummarizationAborted:
                raise
            except SummarizationError as error:
                if not error.overflow:
                    raise
                limit = (limit or self._piece_tokens(custom_instructions, instructions)) // 2
        raise SummarizationError(
            "the conversation does not fit the summarizer's context window, even in small pieces"
        )

    def _prompt(
        self,
        text: str,
        previous: str | None,
        custom: str | None,
        instructions: str | None,
        cap: int | None = None,
    ) -> str:
        return build_summary_prompt(
            text,
            previous_summary=previous,
            custom_instructions=custom,
            instructions=instructions,
            length_limit_tokens=cap or self.cap_tokens,
        )

    def _fits(self, prompt: str) -> bool:
        input_tokens = estimate_request_tokens(SUMMARIZATION_SYSTEM_PROMPT, prompt)
        needed = min(MIN_SUMMARY_TOKENS, int(self.model.max_tokens))
        return output_budget(self.model, input_tokens) >= needed

    def _piece_tokens(self, custom: str | None, instructions: str | None) -> int:
        """Conversation tokens per piece: the window minus output room, instructions and a
        running summary of up to the cap (estimate_request_tokens adds 10 %).
        """
        # Later pieces carry the (longer) update instructions too: count both, to be safe.
        frame = self._prompt("", None, custom, instructions) + UPDATE_PROMPT
        overhead = estimate_request_tokens(SUMMARIZATION_SYSTEM_PROMPT, frame) + self.cap_tokens
        output = min(MIN_SUMMARY_TOKENS, int(self.model.max_tokens))
        room = int((int(self.model.context_window) - output - 16) / 1.1) - overhead
        return max(room, 256)

    async def _fold(
        self,
        chunks: list[str],
        previous: str | None,
        custom: str | None,
        instructions: str | None,
        cap: int,
    ) -> str:
        running = previous
        for index, chunk in enumerate(chunks):
            last = index == len(chunks) - 1
            # Earlier pieces use the checkpoint prompts; the caller's instructions shape the end.
            prompt = self._prompt(chunk, running, custom, instructions if last else None, cap)
            result = await self.request(prompt, max_tokens=cap)
            running = cap_text(result.text, cap)
        return running or ""

    async def request(self, prompt: str, *, max_tokens: int | None = None) -> SummaryResult:
        """One request, retried on transient failures (with the retry events).

        :param max_tokens: the output limit (default: the summary cap); the model's window
            may lower it further
        """
        attempt = 0
        while True:
            try:
                result = await request_summary(
                    prompt,
                    self.model,
                    self.models,
                    signal=self.signal,
                    thinking_level=self.thinking_level,
                    max_tokens=max_tokens or self.cap_tokens,
                )
            except SummarizationAborted:
                if attempt:
                    self.publish({"type": "summarization_retry_finished"})
                raise
            except SummarizationError as error:
                if not self._may_retry(error, attempt):
                    if attempt:
                        self.publish({"type": "summarization_retry_finished"})
                    raise
                attempt += 1
                await self._wait_before(attempt, error)
                continue
            if attempt:
                self.publish({"type": "summarization_retry_finished"})
            self.usage = add_usage(self.usage, result.usage)
            return result

    def _may_retry(self, error: SummarizationError, attempt: int) -> bool:
        return self.retry.enabled and error.retryable and attempt < self.retry.max_retries

    async def _wait_before(self, attempt: int, error: SummarizationError) -> None:
        """Announce the retry, wait the agent's backoff for it, announce its start."""
        retry = self.retry
        delay = backoff_delay_ms(attempt, retry.base_delay_ms, retry.max_delay_ms or 2**53, None)
        response = error.response
        message = (response.get("errorMessage") if response is not None else None) or str(error)
        self.publish(
            {
                "type": "summarization_retry_scheduled",
                "attempt": attempt,
                "maxAttempts": retry.max_retries,
                "delayMs": delay,
                "errorMessage": message,
            }
        )
        if not await self.signal.sleep(delay / 1000):
            self.publish({"type": "summarization_retry_finished"})
            raise SummarizationAborted("Summarization aborted")
        if self.reason is not None:
            self.publish(
                {
                    "type": "summarization_retry_attempt_start",
                    "source": self.source,
                    "reason": self.reason,
                }
            )
        else:
            self.publish({"type": "summarization_retry_attempt_start", "source": self.source})
