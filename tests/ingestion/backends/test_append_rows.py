"""`runs.append_rows` (the bundle's appender, `ingestion.bundle.jsonl_append`) after a crash
mid-write: the torn last line is cut, whatever its length, and every whole line before it stays.
Expected files are written out by hand."""

from __future__ import annotations

import pytest

from ingestion.backends.drivers.runs import append_rows
from ingestion.bundle.jsonl_append import _TAIL_BLOCK

WHOLE = b'{"image_id": "a"}\n{"image_id": "b"}\n'


@pytest.mark.parametrize("torn_length", [1, 5, 3 * _TAIL_BLOCK + 7])
def test_a_torn_last_line_is_cut_before_the_append(tmp_path, torn_length):
    path = tmp_path / "images.jsonl"
    path.write_bytes(WHOLE + b'{"image_id": "' + b"x" * torn_length)

    assert append_rows(path, [{"image_id": "c"}]) == 1

    assert path.read_bytes() == WHOLE + b'{"image_id": "c"}\n'


def test_a_file_holding_only_a_torn_line_is_emptied_first(tmp_path):
    path = tmp_path / "images.jsonl"
    path.write_bytes(b'{"image_id": "a"' + b" " * (_TAIL_BLOCK + 3))

    append_rows(path, [{"image_id": "c"}], unique_key="image_id")

    assert path.read_bytes() == b'{"image_id": "c"}\n'


def test_whole_lines_are_kept_as_they_are(tmp_path):
    path = tmp_path / "images.jsonl"
    path.write_bytes(WHOLE)

    append_rows(path, [{"image_id": "b"}, {"image_id": "c"}], unique_key="image_id")

    assert path.read_bytes() == WHOLE + b'{"image_id": "c"}\n'
