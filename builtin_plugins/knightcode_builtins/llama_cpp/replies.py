"""The router's JSON answers that the plugin reads field by field, as ``TypedDict`` shapes.

Only the fields read are declared, all optional: a router version that leaves one out must not
break the plugin. :class:`~knightcode_builtins.llama_cpp.router.RouterClient` checks that an
answer is a JSON object before it gives it one of these types; the readers then index it inside
``try`` blocks or check each value's type (``isinstance``) before using it.
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["ChatCompletion", "TopLogprob"]


class TopLogprob(TypedDict, total=False):
    """One next-token candidate: its token id and log-probability."""

    id: int
    token: str
    logprob: float


class _TokenLogprobs(TypedDict, total=False):
    top_logprobs: list[TopLogprob]


class _Logprobs(TypedDict, total=False):
    content: list[_TokenLogprobs]


class _Choice(TypedDict, total=False):
    logprobs: _Logprobs


class _Timings(TypedDict, total=False):
    prompt_n: int  # prompt tokens evaluated, cache hits excluded (llama.cpp's own field)


class _PromptDetails(TypedDict, total=False):
    cached_tokens: int | None


class _Usage(TypedDict, total=False):
    prompt_tokens: int | None
    prompt_tokens_details: _PromptDetails | None


class ChatCompletion(TypedDict, total=False):
    """A non-streaming ``/v1/chat/completions`` answer asked for one token with ``logprobs``."""

    choices: list[_Choice]
    timings: _Timings | None
    usage: _Usage | None
