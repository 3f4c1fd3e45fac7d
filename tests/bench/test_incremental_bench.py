"""The append case of `make bench` (bench/incremental.py): the generator it appends is a faithful
copy of one generator's evidence under a new id, so the incremental build it times rebuilds a
whole generator's worth of rows."""

from __future__ import annotations

import json

from bench.incremental import NEWCOMER, dbt_figures, newcomer_bundle, standing_share
from ingestion.bundle.format import write_bundle
from tests.worlds.hand import hand_bundle_tables


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _run_results(target, elapsed_s: float, seconds: dict[str, float]) -> None:
    """A dbt run_results.json in `target` listing `seconds` per node."""
    results = [{"unique_id": uid, "execution_time": s} for uid, s in seconds.items()]
    (target / "run_results.json").write_text(
        json.dumps({"elapsed_time": elapsed_s, "results": results})
    )


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
    _run_results(
        tmp_path,
        9.876,
        {
            "model.qct2i.int_a": 3.0,
            "model.qct2i.int_b": 1.25,
            "test.qct2i.unique_int_a_key.abc": 0.5,
            "seed.qct2i.capabilities": 2.0,
        },
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


def test_the_standing_share_counts_the_full_builds_seconds_in_nodes_not_run(tmp_path):
    """Guards RESULTS' share of a full build that an incremental build leaves standing: the full
    build's seconds in the nodes missing from the incremental build, over all its seconds."""
    _run_results(
        tmp_path,
        11.0,
        {
            "seed.qct2i.capabilities": 1.0,
            "model.qct2i.int_question_graph": 2.0,
            "model.qct2i.int_a": 5.0,
            "test.qct2i.unique_int_a_key.abc": 2.0,
        },
    )
    ran = {"model.qct2i.int_a", "test.qct2i.unique_int_a_key.abc"}
    assert standing_share(tmp_path, ran) == 0.3  # (1 + 2) / 10
