"""Reading and atomically writing the JSON configuration files."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from knightcode._config.jsonfile import read_json_object, write_json_atomic
from knightcode._errors import ConfigError


def test_missing_file_is_none(tmp_path: Path) -> None:
    assert read_json_object(tmp_path / "nope.json") is None


@pytest.mark.parametrize("text", ["", "  \n\t\n"])
def test_empty_file_is_an_empty_object(tmp_path: Path, text: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(text)
    assert read_json_object(path) == {}


def test_object_is_returned(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('\ufeff{"a": {"b": [1, "é"]}}', encoding="utf-8")
    assert read_json_object(path) == {"a": {"b": [1, "é"]}}


def test_invalid_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{\n  "a": 1,\n  "b": ,\n}\n')
    with pytest.raises(ConfigError) as info:
        read_json_object(path)
    assert str(info.value) == f"{path}: invalid JSON at line 3 column 8: Expecting value"


def test_nan_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('{"a": NaN}')
    with pytest.raises(ConfigError, match="NaN is not valid JSON"):
        read_json_object(path)


@pytest.mark.parametrize(("text", "kind"), [("[1, 2]", "an array"), ('"x"', "a single value")])
def test_non_object_is_rejected(tmp_path: Path, text: str, kind: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        read_json_object(path)
    assert str(info.value) == f"{path}: must be a JSON object ({{...}}), but it holds {kind}"


def test_unreadable_file_gives_the_os_reason(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.mkdir()  # reading a directory fails even as root
    with pytest.raises(ConfigError) as info:
        read_json_object(path)
    assert str(info.value) == f"{path}: is a directory, not a JSON file"


def test_non_utf8_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        read_json_object(path)


def test_write_is_pretty_raw_utf8_with_newline_and_mode(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "out.json"
    write_json_atomic(path, {"b": 1, "a": ["é"]}, mode=0o600)
    assert path.read_text(encoding="utf-8") == '{\n  "b": 1,\n  "a": [\n    "é"\n  ]\n}\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["out.json"]  # no temp file left


def test_write_replaces_existing_file_with_default_mode(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    path.write_text("old")
    path.chmod(0o600)
    write_json_atomic(path, [1])
    assert json.loads(path.read_text()) == [1]
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_failed_write_leaves_no_temp_file(tmp_path: Path) -> None:
    folder = tmp_path / "cfg"
    target = folder / "out.json"
    (target / "inside").mkdir(parents=True)  # os.replace cannot put a file over a directory
    with pytest.raises(OSError):
        write_json_atomic(target, {"a": 1})
    assert [p.name for p in folder.iterdir()] == ["out.json"]
    assert target.is_dir()
