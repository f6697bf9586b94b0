"""Test helpers for knightcode and its plugins: a scripted model server.

:class:`ScriptedServer` is a real HTTP server on 127.0.0.1 (a free port, a background thread)
that answers model API requests from a script of replies you queue, and records every request.
Point a provider at ``server.base_url`` and the real client code runs against it, streaming and
all — no mocks::

    from knightcode.testing import ScriptedServer, text_reply, tool_call, tool_call_reply, usage

    def test_my_plugin():
        with ScriptedServer() as server:
            server.add(
                tool_call_reply([tool_call("call_1", "read", {"path": "a.txt"}, split=3)]),
                text_reply("Done", usage=usage(input=120, output=3, cache_read=100)),
            )
            ...  # e.g. models.json: {"providers": {"scripted": {"baseUrl": server.base_url,
                 #     "api": "openai-completions", "models": [{"id": "scripted-model"}]}}}
            assert server.requests[0].body["messages"][-1]["role"] == "user"

Endpoints:

* ``POST /v1/chat/completions`` — OpenAI chat completions: SSE when the body says
  ``"stream": true`` (thinking as ``reasoning_content`` deltas, tool-call arguments split over
  chunks, a usage chunk when ``stream_options.include_usage`` is set, ``data: [DONE]``), plain
  JSON otherwise;
* ``POST /v1/messages`` — Anthropic messages: ``message_start``, ``content_block_start/delta/stop``
  for thinking (with a signature), text and ``tool_use``, ``message_delta`` with usage and
  ``stop_reason``, ``message_stop``;
* ``POST …/responses`` — the OpenAI Responses API (also Azure OpenAI's
  ``/openai/v1/responses?api-version=…``): reasoning items whose summary streams as thinking (with
  ``encrypted_content`` ``enc-scripted-<n>`` when the request's ``include`` asks for it),
  ``message`` items, ``function_call`` items (ids ``fc_scripted_<n>_<i>``), then
  ``response.completed`` with the usage (``response.incomplete`` for ``finish="length"``,
  ``response.failed`` for a stream error);
* ``POST …/models/<id>:streamGenerateContent`` — Google Gemini: SSE of whole responses (thought
  parts with a base64 ``thoughtSignature``, text, ``functionCall`` parts — sent without an id
  when the scripted call's id is empty), then ``finishReason`` and ``usageMetadata``;
* ``POST …/model/<id>/converse-stream`` — Amazon Bedrock Converse: an AWS binary event stream
  with checksums (``reasoningContent``, text and ``toolUse`` deltas, ``messageStop``,
  ``metadata``; an ``exception`` message for :func:`stream_error_reply`); the request's SigV4
  ``authorization`` header is recorded like any other;
* ``GET /v1/models`` — the ``models`` given to the constructor.

The same reply renders in every dialect, so one script serves every client. Each model request
consumes the next reply; a request with no reply left gets HTTP 500 with a JSON error saying the
script ran out. ``server.requests`` lists :class:`ScriptedRequest` records (method, path,
lower-cased headers, parsed JSON body).

Replies: :func:`text_reply`, :func:`reply` (thinking + text + tool calls), :func:`tool_call_reply`
with :func:`tool_call`, :func:`error_reply` (status, message, headers such as ``retry-after``),
:func:`stream_error_reply` (an error event inside a 200 stream), :func:`drop_reply` (cut the
connection after N events), :func:`deltas_reply` (a fast stream of N identical deltas for
benchmarks), :func:`raw_reply` (exact bytes). ``delay=`` slows a stream down event by event.

:class:`TmuxSession` (``knightcode.testing.tmux``, loaded on first use) runs a program in a private
real tmux for end-to-end tests of the terminal UI: keys in, screen captures out, waits on screen
content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knightcode.testing._replies import (
    Reply,
    ScriptUsage,
    ToolCallSpec,
    deltas_reply,
    drop_reply,
    error_reply,
    raw_reply,
    reply,
    stream_error_reply,
    text_reply,
    tool_call,
    tool_call_reply,
    usage,
)
from knightcode.testing._server import ScriptedRequest, ScriptedServer

if TYPE_CHECKING:
    from knightcode.testing.tmux import TmuxSession

__all__ = [
    "Reply",
    "ScriptUsage",
    "ScriptedRequest",
    "ScriptedServer",
    "TmuxSession",
    "ToolCallSpec",
    "deltas_reply",
    "drop_reply",
    "error_reply",
    "raw_reply",
    "reply",
    "stream_error_reply",
    "text_reply",
    "tool_call",
    "tool_call_reply",
    "usage",
]


def __getattr__(name: str) -> object:
    """Load :class:`TmuxSession` on first use, so importing the scripted server stays light."""
    if name == "TmuxSession":
        from knightcode.testing.tmux import TmuxSession

        return TmuxSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
