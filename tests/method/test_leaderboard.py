"""The per-judge HCQ leaderboard in numpy (`method.leaderboard.leaderboards_by_judge`), worked by
hand on a world of two judges, three generators and both languages; the marts' parity with
`fct_hcq_leaderboard` is tests/marts/test_leaderboard_by_judge.py. Written because no unit test
reached the module (mutation testing, issue 36: all 269 mutants uncovered)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from method.leaderboard import leaderboard_schema, leaderboards_by_judge

# judge, model, language, capability, score_num, score_den
STATS = [
    ("j1", "m1", "en", "color", 1, 2),  # 0.5
    ("j1", "m1", "en", "shape", 1, 1),  # 1.0
    ("j1", "m1", "zh", "color", 2, 2),  # 1.0
    ("j1", "m1", "en", "text", 1, 3),  # Eq. 3 from transcriptions: 1 - 2/3
    ("j1", "m2", "en", "color", 0, 2),  # 0.0
    ("j1", "m2", "zh", "color", 2, 2),  # 1.0: ties m1 in zh
    ("j1", "m3", "en", "text", 1, 3),  # text alone: its total is Eq. 3's value itself
    ("j2", "m1", "zh", "color", 2, 2),  # the second judge saw m1's Chinese color only
]
# the taxonomy's order (text first), which is not the names' order
TAXONOMY = [("text", "text", 0, 0), ("color", "attr", 1, 1), ("shape", "attr", 1, 2)]
THIRD = 1 - 2 / 3  # 0.33333333333333337, where 1 / 3 is 0.3333333333333333


def _leaderboard(stats_rows, text_source: str) -> pa.Table:
    keys = ("judge_id", "model_id", "language", "capability", "score_num", "score_den")
    stats = pa.Table.from_pylist([dict(zip(keys, row, strict=True)) for row in stats_rows])
    taxonomy = pa.Table.from_pylist(
        [
            {"capability": c, "group_key": g, "group_order": go, "capability_order": co}
            for c, g, go, co in TAXONOMY
        ]
    )
    sources = pa.Table.from_pylist(
        [{"capability": "text", "score_source": text_source}]
        + [{"capability": c, "score_source": "judgment"} for c in ("color", "shape")]
    )
    languages = pa.table({"language": ["zh", "en", "en"]})
    return leaderboards_by_judge(stats, taxonomy, sources, languages)


def test_each_judges_leaderboard_by_hand():
    """Per judge, generator and scope (en, zh, pooled, bilingual): total and group views in
    points, competition rank within the scope (ties share 1), groups and capabilities used.
    By hand: j1 m1 en: attr (0.5 + 1) / 2 = 0.75, text 1/3, total 0.5417; zh attr 1; pooled color
    3/4, attr 0.875, total (0.875 + 1/3) / 2; bilingual: views and totals the mean of en and zh
    (text has no zh view: none), capabilities the fewer (zh's 1). m2: en 0, zh 1, pooled 2/4.
    m3: text alone, no zh. j2: m1 zh color 1 only: en and so bilingual undefined."""
    rows = _leaderboard(STATS, "transcription").to_pylist()
    got = [
        (
            r["judge_id"], r["model_id"], r["language_scope"], r["hcq_total"], r["attr"],
            r["text"], r["rank"], r["n_groups"], r["n_capabilities"], r["hcq_total_frac"],
        )
        for r in rows
    ]  # fmt: skip
    en, pooled = (0.75 + THIRD) / 2, (0.875 + THIRD) / 2
    none = (None, None, None, None, 0, 0, None)
    expected = [
        ("j1", "m1", "en", 100 * en, 75.0, 100 * THIRD, 1, 2, 3, en),
        ("j1", "m1", "zh", 100.0, 100.0, None, 1, 1, 1, 1.0),
        ("j1", "m1", "pooled", 100 * pooled, 87.5, 100 * THIRD, 1, 2, 3, pooled),
        ("j1", "m1", "bilingual", 50 * (en + 1), 87.5, None, 1, 1, 1, (en + 1) / 2),
        ("j1", "m2", "en", 0.0, 0.0, None, 3, 1, 1, 0.0),
        ("j1", "m2", "zh", 100.0, 100.0, None, 1, 1, 1, 1.0),
        ("j1", "m2", "pooled", 50.0, 50.0, None, 2, 1, 1, 0.5),
        ("j1", "m2", "bilingual", 50.0, 50.0, None, 2, 1, 1, 0.5),
        ("j1", "m3", "en", 100 * THIRD, None, 100 * THIRD, 2, 1, 1, THIRD),
        ("j1", "m3", "zh", *none),
        ("j1", "m3", "pooled", 100 * THIRD, None, 100 * THIRD, 3, 1, 1, THIRD),
        ("j1", "m3", "bilingual", *none),
        ("j2", "m1", "en", *none),
        ("j2", "m1", "zh", 100.0, 100.0, None, 1, 1, 1, 1.0),
        ("j2", "m1", "pooled", 100.0, 100.0, None, 1, 1, 1, 1.0),
        ("j2", "m1", "bilingual", *none),
    ]
    assert [row[:3] for row in got] == [row[:3] for row in expected]
    for row, want in zip(got, expected, strict=True):
        assert row == pytest.approx(want), row[:3]
    assert got[8][-1] == THIRD != 1 / 3  # text scored by Eq. 3 as 1 - D / L, not L - D over L
    assert {r["text_evidence"] for r in rows} == {"transcription"}


def test_without_transcriptions_text_evidence_is_judgment_and_types_hold():
    """No capability scored from transcriptions: every row says `judgment`; the text column,
    null in every row, keeps the contract's float64."""
    table = _leaderboard([row for row in STATS if row[3] != "text"], "judgment")
    assert set(table.column("text_evidence").to_pylist()) == {"judgment"}
    assert table.schema == leaderboard_schema(("text", "attr"))
    assert set(table.column("text").to_pylist()) == {None}
