"""The append case of `make bench` (bench/incremental.py): the generator it appends is a faithful
copy of one generator's evidence under a new id, so the incremental build it times rebuilds a
whole generator's worth of rows."""

from __future__ import annotations

import json

from bench.incremental import NEWCOMER, newcomer_bundle
from ingestion.bundle.format import write_bundle
from tests.worlds.hand import hand_bundle_tables


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_newcomer_repeats_one_generators_rows_under_its_own_id(tmp_path):
    """Guards against an appended generator with no rows (an incremental build of nothing
    would look fast) or with another generator's rows mixed in."""
    tables = hand_bundle_tables()
    write_bundle(tmp_path / "hand", tables)
    out = newcomer_bundle(tmp_path / "hand", tmp_path / "newcomer", copied="m1")
    for name in ("judgments", "transcriptions"):
        expected = [
            {**row, "model_id": NEWCOMER}
            for row in _rows(tmp_path / "hand" / f"{name}.jsonl")
            if row["model_id"] == "m1"
        ]
        assert expected and _rows(out / f"{name}.jsonl") == expected
    assert _rows(out / "prompts.jsonl") == _rows(tmp_path / "hand" / "prompts.jsonl")
