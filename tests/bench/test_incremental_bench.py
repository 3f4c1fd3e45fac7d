"""The append case of `make bench` (bench/incremental.py): the generator it appends is a faithful
copy of one generator's evidence under a new id, so the incremental build it times rebuilds a
whole generator's worth of rows."""

from __future__ import annotations

import json

from bench.incremental import NEWCOMER, dbt_figures, newcomer_bundle
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


def test_dbt_figures_split_a_builds_node_seconds_by_kind(tmp_path):
    """Guards the breakdown RESULTS quotes: model and test node-seconds summed apart (a seed
    counted in neither), dbt's own elapsed time, the slowest nodes named by their model or test
    name, slowest first."""
    results = [
        {"unique_id": "model.qct2i.int_a", "execution_time": 3.0},
        {"unique_id": "model.qct2i.int_b", "execution_time": 1.25},
        {"unique_id": "test.qct2i.unique_int_a_key.abc", "execution_time": 0.5},
        {"unique_id": "seed.qct2i.capabilities", "execution_time": 2.0},
    ]
    (tmp_path / "run_results.json").write_text(
        json.dumps({"elapsed_time": 9.876, "results": results})
    )
    figures = dbt_figures(tmp_path, "incremental")
    assert figures["incremental_dbt_run_s"] == 9.88
    assert figures["incremental_model_node_s"] == 4.2  # 4.25, one decimal
    assert figures["incremental_test_node_s"] == 0.5
    assert list(figures["incremental_slowest_nodes"].items()) == [
        ("int_a", 3.0),
        ("capabilities", 2.0),
        ("int_b", 1.25),
        ("unique_int_a_key", 0.5),
    ]
