"""The scoring marts on the hand bundle: every expected value is worked out by hand below."""

from __future__ import annotations

import pytest

from ingestion.bundle.format import TABLES
from tests.helpers import query, warehouse_in
from tests.worlds.hand import write_hand_bundle


@pytest.fixture(scope="module")
def warehouse(hand_published):
    """The session's hand warehouse (imported and built once; read only here)."""
    return hand_published


def leaderboard(warehouse, model_id, scope):
    (row,) = query(
        warehouse,
        "select hcq_total, entities, text, attributes, relations, semantics, n_groups, rank, "
        f"text_evidence from marts.fct_hcq_leaderboard "
        f"where model_id = '{model_id}' and language_scope = '{scope}'",
    )
    return row


def test_validity_chain_diamond_and_missing(warehouse):
    rows = dict(
        ((m, p, q), (v, o))
        for m, p, q, v, o in query(
            warehouse,
            "select model_id, prompt_id, question_id, is_valid, outcome_masked "
            "from marts.fct_question_records",
        )
    )
    # m1: q2 said no, so q3 (chain) is masked although it said yes.
    assert rows[("m1", "cA-en", "q3")] == (False, None)
    assert rows[("m1", "cA-en", "q2")] == (True, 0)
    # m2: the root q1 has no judgment: it and every descendant (q2, q3 and diamond child q5) drop.
    for q in ("q1", "q2", "q3", "q5"):
        assert rows[("m2", "cA-en", q)][0] is False
    # m2: q4 said no: the diamond child q5 and the text children are masked.
    assert rows[("m2", "cA-en", "q4")] == (True, 0)
    assert rows[("m2", "cA-en", "q6")] == (False, None)


def test_question_graph_depth_and_components(warehouse):
    got = dict(
        ((p, q), (root, depth, comp))
        for p, q, root, depth, comp in query(
            warehouse,
            "select distinct prompt_id, question_id, is_root, depth, component_id "
            "from marts.fct_question_records",
        )
    )
    assert got[("cA-en", "q3")] == (False, 2, "cA-en#1")
    assert got[("cA-en", "q5")] == (False, 1, "cA-en#1")
    assert got[("cB-en", "q1")] == (True, 0, "cB-en#1")
    assert got[("cB-en", "q2")] == (True, 0, "cB-en#2")


def test_text_scores_by_hand(warehouse):
    scores = dict(
        ((m, s), v)
        for m, s, v in query(
            warehouse,
            "select model_id, language_scope, score from marts.fct_capability_scores "
            "where capability = 'text_rendering'",
        )
    )
    # m1 en: D = 0 (OPEN) + 2 (𠮷 read as 吉) + 4 (empty extraction) over L = 4 + 7 + 4.
    assert scores[("m1", "en")] == pytest.approx(100 * (1 - 6 / 15))
    # m2 en: cA unavailable (excluded); SALE capped at its length 4.
    assert scores[("m2", "en")] == pytest.approx(0.0)
    # m1 zh: 福 unmatched (1) over 欢迎 + 福 + 特价 = 5 units.
    assert scores[("m1", "zh")] == pytest.approx(100 * (1 - 1 / 5))
    # m2 zh: one unavailable, one without a row: no text evidence at all.
    assert scores[("m2", "zh")] is None
    assert scores[("m1", "pooled")] == pytest.approx(100 * (1 - 7 / 20))


def test_hcq_totals_by_hand(warehouse):
    # m1 en: entities 1, text 0.6, attributes 0 (texture masked), relations 1, semantics 1.
    assert leaderboard(warehouse, "m1", "en")[:8] == pytest.approx(
        (72.0, 100.0, 60.0, 0.0, 100.0, 100.0, 5, 1)
    )
    # m2 en: attributes and relations have no valid question and drop out: (0 + 0 + 1) / 3.
    # (entities: q4 valid "no", animals masked; text: SALE capped; semantics: style yes.)
    total, entities, text, attributes, relations, semantics, n_groups, rank, _ = leaderboard(
        warehouse, "m2", "en"
    )
    assert (total, n_groups, rank) == (pytest.approx(100 / 3), 3, 2)
    assert (entities, text, semantics) == (0.0, 0.0, 100.0)
    assert (attributes, relations) == (None, None)
    # m2 zh: text has no evidence: mean of the other four groups.
    assert leaderboard(warehouse, "m2", "zh")[0] == pytest.approx(100.0)
    assert leaderboard(warehouse, "m2", "zh")[6] == 4
    # Bilingual: fixed 50/50 mean of the language totals.
    assert leaderboard(warehouse, "m1", "bilingual")[0] == pytest.approx((72 + 96) / 2)
    assert leaderboard(warehouse, "m2", "bilingual")[0] == pytest.approx((100 / 3 + 100) / 2)
    # Pooled: color 1 of 2 valid -> attributes (0.5 + 1) / 2; text 1 - 7/20.
    assert leaderboard(warehouse, "m1", "pooled")[0] == pytest.approx(
        100 * (1 + 0.65 + 0.75 + 1 + 1) / 5
    )
    assert leaderboard(warehouse, "m1", "en")[8] == "transcription"


def test_without_transcriptions_text_falls_back_to_judgments(
    hand_published_without_transcriptions,
):
    warehouse = hand_published_without_transcriptions
    total, *_, text_evidence = leaderboard(warehouse, "m1", "en")
    # m1 en text questions: q6 yes, q7 no (both valid under q4 = yes), cB q2 no -> 1/3.
    assert text_evidence == "judgment"
    assert total == pytest.approx(100 * (1 + 1 / 3 + 0 + 1 + 1) / 5)


def test_jsonl_and_parquet_load_identical_raw_tables(warehouse, tmp_path):
    """The Parquet bundle of the same evidence loads every raw table with the JSONL bundle's
    columns, types and rows, so a build gives it the same marts: builds are deterministic, and
    tests/qct2i/test_determinism.py builds a Parquet bundle's marts and compares them too."""
    from ingestion.bundle import load_bundle

    parquet = warehouse_in(tmp_path / "parquet-wh")
    load_bundle(write_hand_bundle(tmp_path / "bundle", fmt="parquet"), parquet)
    for table in TABLES:
        for sql in (f"describe raw.{table}", f"select * from raw.{table} order by all"):
            assert query(parquet, sql) == query(warehouse, sql), sql
