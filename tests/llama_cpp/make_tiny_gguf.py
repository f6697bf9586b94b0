#!/usr/bin/env python3
"""Write tiny llama-architecture GGUF models for testing a llama-server router.

(knightcode's copy of ../shared/tools/make_tiny_gguf.py, plus the ``split`` variant.)

The models need no download: weights are computed here. Each one is a real
2-layer llama model (attention + SwiGLU FFN are evaluated by llama.cpp), but
the attention output and FFN down projections are zero, so the residual
stream at the top equals the embedding of the *last* token.  With one-hot
embeddings for a few "source" tokens, the output matrix then acts as a
hand-written bigram table:

    P(next token | prompt) = softmax(s * W_out[:, k])
    (k = the last token's one-hot slot, s = 1/sqrt(1/N_EMBD + eps) from RMS norm)

W_out[:, k] is set to log(p)/s for the listed targets and LOGIT_FLOOR/s for
every other token, so the listed probabilities come back exactly.

so chat replies and next-token probabilities are known in advance, which makes
assertions in tests exact (within float tolerance).

Variants (``--variant``):

* ``chat``     after the ChatML generation prompt ("<|im_start|>assistant\\n")
               the next-token distribution is fixed (see CHAT_FIRST_TOKEN);
               greedy decoding answers "Hello!" and stops.
* ``tools``    greedy decoding answers with one Hermes-style tool call:
               <tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris"}}\\n</tool_call>
* ``split``    like ``chat``, but its vocabulary has no "Yes"/"No" words: those labels take
               several tokens (tests of the single-token label check; knightcode's copy only)
* ``decision`` an "openjev" decision model for POST /v1/systemone (needs a
               llama.cpp with that endpoint); letters A/B/C... carry fixed
               probabilities after the systemone prompt.

Tokenizer: byte-level BPE ("gpt2" model) over all 256 bytes plus a few merged
words and ChatML special tokens, so every ASCII letter and digit is a single
token and "Yes"/"No" are single tokens too.

Usage:  python make_tiny_gguf.py OUT_DIR            (writes all variants)
        python make_tiny_gguf.py OUT_DIR --variant chat
Requires: pip install gguf numpy
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

import numpy as np

try:
    import gguf
except ImportError:  # pragma: no cover
    sys.exit("pip install gguf")

N_EMBD = 64
N_LAYER = 2
N_HEAD = 4
N_FF = 128
N_CTX = 2048
RMS_EPS = 1e-5
LOGIT_FLOOR = -30.0  # logit of every token that a bigram row does not name

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
USER_DEFINED = ["<tool_call>", "</tool_call>", "<|answer|>"]
# earlier entries get lower merge ranks: the space-prefixed words come first so
# that " Yes" becomes the single token "ĠYes" (not " " + "Yes")
WORDS = [
    "ĠYes", "ĠNo", "Ġworld", "Hello", "Yes", "No", "assistant", "user", "system", "tool",
    # one token holding the whole tool-call body (text between the tags)
    "Ċ{\"name\":Ġ\"get_weather\",Ġ\"arguments\":Ġ{\"city\":Ġ\"Paris\"}}Ċ",
]

# next-token distribution after the generation prompt (last token "\n"), chat variant
CHAT_FIRST_TOKEN = {
    "Hello": 0.40,
    "A": 0.20,
    "B": 0.10,
    "C": 0.05,
    "Yes": 0.12,
    "No": 0.03,
    "1": 0.01,
    "2": 0.02,
    "3": 0.04,
    "4": 0.02,
    "5": 0.01,
}
# the systemone prompt of the decision variant ends with <|answer|>
DECISION_FIRST_TOKEN = {"A": 0.6, "B": 0.3, "C": 0.1}

CHATML_TEMPLATE = r"""{%- if tools %}<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>{% for tool in tools %}
{{ tool | tojson }}{% endfor %}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'system' and loop.first %}
{%- elif message.role == 'user' or message.role == 'system' %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% elif message.role == 'assistant' %}<|im_start|>assistant
{% if message.content %}{{ message.content }}{% endif %}
{%- if message.tool_calls %}{% for tc in message.tool_calls %}{% if tc.function %}{% set tc = tc.function %}{% endif %}
<tool_call>
{"name": "{{ tc.name }}", "arguments": {% if tc.arguments is string %}{{ tc.arguments }}{% else %}{{ tc.arguments | tojson }}{% endif %}}
</tool_call>{% endfor %}{% endif %}<|im_end|>
{% elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

# prompt for POST /v1/systemone (openjev: one letter per option, read at the last prompt token)
SYSTEMONE_TEMPLATE = (
    "{% set letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz' %}"
    "<|im_start|>user\nState:\n{% if state is string %}{{ state }}{% else %}{{ state | tojson }}{% endif %}"
    "\n\nQuestion: {% if instructions is string %}{{ instructions }}{% else %}{{ instructions | tojson }}{% endif %}"
    "\nOptions:\n{% for o in options %}[{{ letters[loop.index0] }}] {{ o.key }}\n{% endfor %}"
    "<|im_end|>\n<|im_start|>assistant\n<|answer|>"
)


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable unicode map."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def build_vocab(words: list[str] | None = None) -> tuple[list[str], list[int], list[str], dict[str, int]]:
    """Tokens, their types, BPE merges and token -> id (``words`` replaces the merged words)."""
    tokens: list[str] = []
    types: list[int] = []
    merges: list[str] = []
    index: dict[str, int] = {}

    def add(tok: str, typ: int) -> None:
        if tok not in index:
            index[tok] = len(tokens)
            tokens.append(tok)
            types.append(int(typ))

    T = gguf.TokenType
    for s in SPECIAL:
        add(s, T.CONTROL)
    for s in USER_DEFINED:
        add(s, T.USER_DEFINED)
    b2u = bytes_to_unicode()
    for b in range(256):
        add(b2u[b], T.NORMAL)
    for w in WORDS if words is None else words:
        # left-to-right merges: "H e", "He l", "Hel l", ...
        cur = w[0]
        for ch in w[1:]:
            m = f"{cur} {ch}"
            if m not in merges:
                merges.append(m)
            cur += ch
            add(cur, T.NORMAL)
    return tokens, types, merges, index


def bigram_rows(variant: str, index: dict[str, int]) -> dict[int, dict[int, float]]:
    """source token id -> {target token id: probability}"""
    b2u = bytes_to_unicode()
    nl = index[b2u[ord("\n")]]

    def tid(s: str) -> int:
        if s in index:
            return index[s]
        if len(s) == 1:
            return index[b2u[ord(s)]]
        raise KeyError(s)

    rows: dict[int, dict[int, float]] = {}
    if variant == "split":
        rows[nl] = {tid(k): v for k, v in CHAT_FIRST_TOKEN.items() if len(k) == 1}
    elif variant == "chat":
        rows[nl] = {tid(k): v for k, v in CHAT_FIRST_TOKEN.items()}
        rows[tid("Hello")] = {tid("!"): 1.0}
        rows[tid("!")] = {tid("<|im_end|>"): 1.0}
    elif variant == "tools":
        body = WORDS[-1]
        rows[nl] = {tid("<tool_call>"): 1.0}
        rows[tid("<tool_call>")] = {index[body]: 1.0}
        rows[index[body]] = {tid("</tool_call>"): 1.0}
        rows[tid("</tool_call>")] = {tid("<|im_end|>"): 1.0}
    elif variant == "decision":
        rows[tid("<|answer|>")] = {tid(k): v for k, v in DECISION_FIRST_TOKEN.items()}
        # plain chat with this model answers "Yes" then stops
        rows[nl] = {tid("Yes"): 1.0}
        rows[tid("Yes")] = {tid("<|im_end|>"): 1.0}
    else:
        raise ValueError(variant)
    return rows


def write_model(path: str, variant: str, seed: int = 0, n_ctx: int = N_CTX, n_embd: int = N_EMBD,
                n_layer: int = N_LAYER, n_ff: int = N_FF) -> dict[str, Any]:
    """Write one model; the sizes can grow (benchmarks) without changing its outputs."""
    rng = np.random.default_rng(seed)
    words = [w for w in WORDS if w not in ("ĠYes", "ĠNo", "Yes", "No")] if variant == "split" else None
    tokens, types, merges, index = build_vocab(words)
    n_vocab = len(tokens)
    rows = bigram_rows(variant, index)
    assert len(rows) <= n_embd

    tok_embd = np.zeros((n_vocab, n_embd), dtype=np.float32)
    output = np.zeros((n_vocab, n_embd), dtype=np.float32)
    # rms_norm(e_k) = e_k / sqrt(1/n_embd + eps)
    norm_scale = 1.0 / math.sqrt(1.0 / n_embd + RMS_EPS)
    expected: dict[str, dict[str, float]] = {}
    for k, (src, dist) in enumerate(rows.items()):
        tok_embd[src, k] = 1.0
        logits = np.full(n_vocab, LOGIT_FLOOR, dtype=np.float64)
        for tgt, p in dist.items():
            logits[tgt] = math.log(p) if p < 1.0 else 0.0
        if len(dist) == 1:
            logits[list(dist)[0]] = 0.0
        output[:, k] = (logits / norm_scale).astype(np.float32)
        expected[tokens[src]] = {tokens[t]: p for t, p in dist.items()}

    w = gguf.GGUFWriter(path, "llama")
    w.add_name(f"tiny-{variant}")
    w.add_context_length(n_ctx)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_layer_norm_rms_eps(RMS_EPS)
    w.add_rope_dimension_count(n_embd // N_HEAD)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(index["<|endoftext|>"])
    w.add_eos_token_id(index["<|im_end|>"])
    w.add_pad_token_id(index["<|endoftext|>"])
    w.add_add_bos_token(False)
    if variant == "decision":
        w.add_chat_template([
            {"name": "default", "template": CHATML_TEMPLATE},
            {"name": "systemone", "template": SYSTEMONE_TEMPLATE},
        ])
        w.add_string("llama.decision.type", "openjev")
        for qtype in ("choice", "score", "noul"):
            w.add_float32(f"llama.decision.temperature.{qtype}", 1.0)
    else:
        w.add_chat_template(CHATML_TEMPLATE)

    def rnd(*shape: int) -> Any:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    w.add_tensor("token_embd.weight", tok_embd)
    for i in range(n_layer):
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(f"blk.{i}.attn_q.weight", rnd(n_embd, n_embd))
        w.add_tensor(f"blk.{i}.attn_k.weight", rnd(n_embd, n_embd))
        w.add_tensor(f"blk.{i}.attn_v.weight", rnd(n_embd, n_embd))
        w.add_tensor(f"blk.{i}.attn_output.weight", np.zeros((n_embd, n_embd), dtype=np.float32))
        w.add_tensor(f"blk.{i}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(f"blk.{i}.ffn_gate.weight", rnd(n_ff, n_embd))
        w.add_tensor(f"blk.{i}.ffn_up.weight", rnd(n_ff, n_embd))
        w.add_tensor(f"blk.{i}.ffn_down.weight", np.zeros((n_embd, n_ff), dtype=np.float32))
    w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    w.add_tensor("output.weight", output)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return {"path": path, "n_vocab": n_vocab, "bigrams": expected}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--variant", choices=["chat", "tools", "decision", "split", "all"], default="all")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    variants = ["chat", "tools", "decision"] if args.variant == "all" else [args.variant]
    for v in variants:
        info = write_model(os.path.join(args.out_dir, f"tiny-{v}.gguf"), v)
        print(json.dumps({"variant": v, "size": os.path.getsize(info["path"]), **info}, ensure_ascii=False))


if __name__ == "__main__":
    main()
