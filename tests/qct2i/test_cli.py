"""`qct2i import`, `qct2i build` and `qct2i leaderboard` as a user runs them: the console script."""

from __future__ import annotations

from tests.helpers import query, run_cli
from tests.worlds.hand import write_hand_bundle


def test_import_build_and_leaderboard(hand_published):
    """The session's hand warehouse is `qct2i import` then `qct2i build` of the hand bundle
    through the console script (`publish_bundle` asserts both exit 0 and that the build
    published); here what they built and what `qct2i leaderboard` prints of it."""
    warehouse = hand_published
    assert query(
        warehouse,
        "select hcq_total from marts.fct_hcq_leaderboard "
        "where model_id = 'm1' and language_scope = 'en'",
    ) == [(72.0,)]
    board = run_cli(["leaderboard"], warehouse)
    assert board.returncode == 0, board.stderr
    assert "HCQ leaderboard: bilingual" in board.stdout
    assert "72.00" in board.stdout


def test_refused_import_names_file_line_and_reason(tmp_path):
    warehouse = tmp_path / "cli.duckdb"
    bundle = write_hand_bundle(tmp_path / "bundle")
    with (bundle / "questions.jsonl").open("a", encoding="utf-8") as out:
        out.write("{not json\n")
    refused = run_cli(["import", str(bundle)], warehouse)
    assert refused.returncode == 2
    n_lines = sum(1 for _ in (bundle / "questions.jsonl").open())
    assert f"questions.jsonl:{n_lines}" in refused.stderr
    assert not warehouse.exists()
