"""The bundle's JSONL appender and reader (`ingestion.bundle.jsonl_append`) on files written here
byte by byte; the drivers' own use of it is tests/ingestion/backends/test_append_rows.py. Written
for the mutants every test survived (issue 36): each expected file is spelled out by hand."""

from __future__ import annotations

import pytest

from ingestion.bundle import jsonl_append
from ingestion.bundle.jsonl_append import append_rows, read_numbered_rows, read_rows

ROW = '{"d": 4}\n'


@pytest.fixture
def small_blocks(monkeypatch):
    """A torn line is looked for 4 bytes at a time, so a few bytes span several blocks."""
    monkeypatch.setattr(jsonl_append, "_TAIL_BLOCK", 4)


def _appended(path, before: bytes, rows=({"d": 4},), **options) -> str:
    path.write_bytes(before)
    append_rows(path, list(rows), **options)
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("before", "kept"),
    [
        (b'{"a": 1}\n{"b": 2}\n{"c": 3', '{"a": 1}\n{"b": 2}\n'),  # torn over two blocks
        (b'\n{"c"', "\n"),  # the only newline is the file's first byte, a block of its own
        (b'{"c": 3', ""),  # no newline at all: the whole file is the torn line
        (b'{"a": 1}\n', '{"a": 1}\n'),  # nothing torn: nothing cut
        (b"", ""),
    ],
)
def test_a_torn_last_line_is_cut_block_by_block_before_the_append(
    tmp_path, small_blocks, before, kept
):
    """Guards the backwards search for the last newline: its block bounds, the newline's
    offset, a newline at offset 0, and a file with none."""
    assert _appended(tmp_path / "rows.jsonl", before) == kept + ROW


def test_rows_whose_key_is_present_are_dropped_and_counted_out(tmp_path):
    """Under the same lock, a key already in the file (its first line too) is not written again;
    the count returned is what was written. Non-ASCII text is written as it is (a bundle's
    files are UTF-8, read by people)."""
    path = tmp_path / "images.jsonl"
    path.write_text('{"id": "a"}\n{"id": "b"}\n', encoding="utf-8")
    rows = [{"id": "a"}, {"id": "c", "text": "café"}, {"id": "b"}]
    assert append_rows(path, rows, unique_key="id") == 1
    expected = '{"id": "a"}\n{"id": "b"}\n{"id": "c", "text": "café"}\n'
    assert path.read_text(encoding="utf-8") == expected


def test_nothing_to_append_writes_nothing_and_a_new_folder_is_made(tmp_path):
    assert append_rows(tmp_path / "a" / "b" / "rows.jsonl", []) == 0
    assert not (tmp_path / "a").exists()
    assert append_rows(tmp_path / "a" / "b" / "rows.jsonl", [{"d": 4}]) == 1
    assert (tmp_path / "a" / "b" / "rows.jsonl").read_text(encoding="utf-8") == ROW


def test_reading_skips_blank_unparseable_non_object_and_torn_lines_and_numbers_them(tmp_path):
    """Line numbers are the file's (skipped lines counted), for messages that name a line."""
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n\nnot json\n[1, 2]\n{"b": 2}\n{"torn": ', encoding="utf-8")
    assert list(read_rows(path)) == [{"a": 1}, {"b": 2}]
    assert list(read_numbered_rows(path)) == [(1, {"a": 1}), (5, {"b": 2})]
    assert list(read_rows(tmp_path / "absent.jsonl")) == []
    assert list(read_numbered_rows(tmp_path / "absent.jsonl")) == []
