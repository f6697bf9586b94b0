"""Loading damaged and unusual files without losing a valid entry; identical round trips."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from knightcode._session import SessionManager, jsonl
from knightcode._session.loading import read_session_file

from .helpers import assistant_msg, header, user_msg


def entry(entry_id: str, parent: str | None, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2025-01-01T00:00:01.000Z",
        "message": {"role": "user", "content": text, "timestamp": 1},
    }


def line(record: Any) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()


def test_damaged_file_loads_every_valid_entry(tmp_path: Path) -> None:
    valid = [
        entry("a0000001", None, "line\u2028separator and \u2029 paragraph"),
        entry("a0000002", "a0000001", "astral 😀🚀 𝄞 and CJK 日本語"),
        entry("a0000003", "a0000002", "after garbage"),
        entry("a0000004", "a0000003", "crlf line"),
    ]
    data = b"".join(
        [
            line(header()) + b"\r\n",
            line(valid[0]) + b"\n",
            b"\n",  # blank: ignored, not counted
            line(valid[1]) + b"\n",
            b"garbage {not json\n",
            b"[1, 2, 3]\n",  # JSON, but not an entry
            b'{"no":"type"}\n',
            line(valid[2]) + b"\n",
            line(valid[3]) + b"\r\n",
            line(entry("a0000005", "a0000004", "cut short"))[:-9],  # a crash mid-write
        ]
    )
    file = tmp_path / "damaged.jsonl"
    file.write_bytes(data)
    session = SessionManager.open(file)
    assert session.get_entries() == valid
    report = session.load_report
    assert report.skipped_lines == 4 and report.truncated_tail and not report.rewritten
    assert session.leaf_id == "a0000004"  # last entry in file order
    assert file.read_bytes() == data  # loading alone never rewrites a v3 file

    # The next append first ends the unfinished line, so nothing is glued to it.
    session.append_message(assistant_msg("new"))
    reloaded = SessionManager.open(file)
    assert [e["id"] for e in reloaded.get_entries()] == [*(v["id"] for v in valid), session.leaf_id]
    assert reloaded.load_report.skipped_lines == 4 and not reloaded.load_report.truncated_tail


def test_a_bad_line_inside_a_large_file_costs_only_itself(tmp_path: Path) -> None:
    # Large enough to use the batched parser; the damaged batch falls back to line by line.
    records = [
        entry(f"{i:08x}", f"{i - 1:08x}" if i else None, f"text {i} é😀") for i in range(1000)
    ]
    lines = [line(header())] + [line(r) for r in records]
    lines[500] = lines[500][:40]  # truncated in the middle of the file
    lines[700] = b'{"type":"message","id":"broken"'  # starts like an object, never closes
    file = tmp_path / "big.jsonl"
    file.write_bytes(b"\n".join(lines) + b"\n")
    loaded = read_session_file(file)
    expected = [r for i, r in enumerate(records) if i + 1 not in (500, 700)]
    assert loaded.entries == expected
    assert loaded.report.skipped_lines == 2 and not loaded.report.truncated_tail


def test_lines_that_only_parse_when_joined_are_still_skipped(tmp_path: Path) -> None:
    # Each line alone is invalid, but joined with a comma they would form one object.
    file = tmp_path / "tricky.jsonl"
    file.write_bytes(
        line(header())
        + b"\n"
        + b'{"type":"x","b":"}\n'
        + b'{","type":"y"}\n'
        + line(entry("aa", None, "ok"))
        + b"\n"
    )
    loaded = read_session_file(file)
    assert [e["id"] for e in loaded.entries] == ["aa"]
    assert loaded.report.skipped_lines == 2


def test_a_bom_before_the_header_is_tolerated(tmp_path: Path) -> None:
    file = tmp_path / "bom.jsonl"
    file.write_bytes(
        b"\xef\xbb\xbf" + line(header()) + b"\n" + line(entry("aa", None, "x")) + b"\n"
    )
    assert [e["id"] for e in SessionManager.open(file).get_entries()] == ["aa"]


def test_a_second_header_is_not_an_entry(tmp_path: Path) -> None:
    file = tmp_path / "two.jsonl"
    file.write_bytes(
        b"\n".join([line(header("one")), line(header("two")), line(entry("aa", None, "x"))]) + b"\n"
    )
    loaded = read_session_file(file)
    assert loaded.header is not None and loaded.header["id"] == "one"
    assert [e["id"] for e in loaded.entries] == ["aa"] and loaded.report.skipped_lines == 1


def test_v3_entries_without_ids_are_repaired_and_rewritten(tmp_path: Path) -> None:
    file = tmp_path / "noid.jsonl"
    orphan = {
        "type": "message",
        "timestamp": "2025-01-01T00:00:02Z",
        "message": {"role": "user", "content": "y", "timestamp": 2},
    }
    file.write_bytes(
        b"\n".join([line(header()), line(entry("aa", None, "x")), line(orphan)]) + b"\n"
    )
    session = SessionManager.open(file)
    assert session.load_report.repaired_ids == 1 and session.load_report.rewritten
    fixed = session.get_entries()[1]
    assert fixed["parentId"] == "aa" and len(fixed["id"]) == 8
    assert json.loads(file.read_bytes().splitlines()[2])["id"] == fixed["id"]


def test_a_file_written_by_knightcode_reads_back_identically(tmp_path: Path) -> None:
    session = SessionManager.create("/home/u/proj", tmp_path)
    usage = {
        "input": 1200,
        "output": 34,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 1234,
        "cost": {
            "input": 0.0036,
            "output": 0.00051,
            "cacheRead": 0.0,
            "cacheWrite": 0,
            "total": 0.00411,
        },
    }
    u1 = session.append_message(user_msg("héllo 😀 \u2028 line\nnext \ud800 lone"))
    session.append_model_change("llama.cpp", "qwen")
    session.append_thinking_level_change("high")
    a1 = session.append_message(assistant_msg("answer 𝄞", usage=usage))
    session.append_message(
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "read",  # type: ignore[typeddict-item]
            "content": [
                {"type": "text", "text": "out"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            ],
            "isError": False,
            "timestamp": 3,
            "details": {"ratio": 1.0},
        }
    )
    session.append_message(
        {
            "role": "bashExecution",
            "command": "ls",
            "output": "",
            "exitCode": None,
            "cancelled": False,
            "truncated": False,
            "timestamp": 4,
        }
    )
    session.append_label(u1, "start")
    session.append_custom("state", {"n": 1e-7})
    session.append_custom_message("note", [{"type": "text", "text": "hi"}], True, {"k": "v"})
    session.append_session_info("  my session  ")
    session.append_compaction(
        "sum", a1, 1234, {"readFiles": [], "modifiedFiles": ["a.py"]}, False, usage
    )  # type: ignore[arg-type]
    session.branch_with_summary(u1, "branch sum", usage=usage)  # type: ignore[arg-type]
    session.append_context_edit([{"op": "omit", "targetId": u1}], reason="test")
    session.close()
    assert session.session_file is not None
    original = session.session_file.read_bytes()
    loaded = read_session_file(session.session_file)
    assert loaded.report.skipped_lines == 0
    assert loaded.header == json.loads(json.dumps(session.header))
    rewritten = jsonl.encode_line(loaded.header) + b"".join(
        jsonl.encode_line(e) for e in loaded.entries
    )
    assert rewritten == original
    assert b"\\u" not in original.replace(
        b"\\ud800", b""
    )  # raw UTF-8, only the lone surrogate escaped
    assert b"null" not in original.replace(b'"parentId":null', b"").replace(b'"exitCode":null', b"")


def test_reference_written_bytes_survive_a_round_trip(tmp_path: Path) -> None:
    # Bytes as the reference (JSON.stringify) writes them: numbers without ".0", tiny costs in
    # plain decimals, raw U+2028 and emoji, an escaped lone surrogate, escaped controls.
    reference = (
        '{"type":"session","version":3,"id":"01a22876-974a-707f-8000-000000000001","timestamp":"2026-01-05T09:00:00.000Z","cwd":"/home/u/p"}\n'
        '{"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-05T09:00:01.123Z",'
        '"message":{"role":"user","content":"x\u2028y 😀 \\ud800 \\u0001\\t\\"q\\"",'
        '"timestamp":1767603601123}}\n'
        '{"type":"message","id":"b1b2c3d4","parentId":"a1b2c3d4","timestamp":"2026-01-05T09:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t","name":"read","arguments":{"path":"a.py","limit":1e+21}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"input":0.00003,"output":0.0000075,"cacheRead":0,"cacheWrite":0,"total":0.0000375}},"stopReason":"toolUse","timestamp":1767603602000}}\n'
    ).encode()
    file = tmp_path / "ref.jsonl"
    file.write_bytes(reference)
    loaded = read_session_file(file)
    assert loaded.header is not None
    assert (
        jsonl.encode_line(loaded.header) + b"".join(jsonl.encode_line(e) for e in loaded.entries)
        == reference
    )


def test_entries_missing_fields_do_not_break_context_building(tmp_path: Path) -> None:
    file = tmp_path / "sparse.jsonl"
    records = [
        header(),
        {"type": "message", "id": "m1", "parentId": None, "timestamp": "2025-01-01T00:00:00Z"},
        {
            "type": "custom_message",
            "id": "c1",
            "parentId": "m1",
            "customType": "x",
            "content": "c",
            "display": True,
        },
        {"type": "branch_summary", "id": "b1", "parentId": "c1", "summary": "s", "fromId": "m1"},
        {
            "type": "compaction",
            "id": "k1",
            "parentId": "b1",
            "summary": "k",
            "firstKeptEntryId": "c1",
            "tokensBefore": 1,
        },
        {
            "type": "future_kind",
            "id": "f1",
            "parentId": "k1",
            "timestamp": "2025-01-01T00:00:00Z",
            "x": [1],
        },
        {
            "type": "message",
            "id": "m2",
            "parentId": "f1",
            "timestamp": "x",
            "message": {"role": "user", "content": "u"},
        },
    ]
    file.write_bytes(b"".join(line(r) + b"\n" for r in records))
    session = SessionManager.open(file)
    assert len(session.get_entries()) == 6  # unknown entry types are kept, not dropped
    context = session.build_context()
    assert [m["role"] for m in context.messages] == [
        "compactionSummary",
        "custom",
        "branchSummary",
        "user",
    ]
    assert context.messages[1]["timestamp"] == 0  # unparsable timestamp: 0 (JavaScript: NaN)
    assert session.estimate_context_tokens().tokens == 4
