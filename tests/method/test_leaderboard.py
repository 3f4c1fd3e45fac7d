"""The per-judge HCQ leaderboard in numpy (`method.leaderboard.leaderboards_by_judge`), worked by
hand on a world of two judges, two generators and both languages; the marts' parity with
`fct_hcq_leaderboard` is tests/marts/test_leaderboard_by_judge.py. Written because no unit test
reached the module (mutation testing, issue 36: all 269 mutants uncovered)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from method.leaderboard import leaderboards_by_judge

# judge, model, language, capability, score_num, score_den
STATS = [
    ("j1", "m1", "en", "color", 1, 2),  # 0.5
    ("j1", "m1", "en", "shape", 1, 1),  # 1.0
    ("j1", "m1", "zh", "color", 2, 2),  # 1.0
    ("j1", "m1", "en", "text", 1, 3),  # Eq. 3 from transcriptions: 1 - 2/3
    ("j1", "m2", "en", "color", 0, 2),  # 0.0
    ("j1", "m2", "zh", "color", 2, 2),  # 1.0: ties m1 in zh
    ("j2", "m1", "en", "color", 2, 2),  # the second judge saw m1's English color only
]
THIRD = 1 - 2 / 3


def _leaderboard() -> list[dict]:
    keys = ("judge_id", "model_id", "language", "capability", "score_num", "score_den")
    stats = pa.Table.from_pylist([dict(zip(keys, row, strict=True)) for row in STATS])
    taxonomy = pa.Table.from_pylist(
        [
            {"capability": c, "group_key": g, "group_order": go, "capability_order": co}
            for c, g, go, co in [
                ("color", "attr", 0, 0),
                ("shape", "attr", 0, 1),
                ("text", "text", 1, 2),
            ]
        ]
    )
    sources = pa.Table.from_pylist(
        [{"capability": "text", "score_source": "transcription"}]
        + [{"capability": c, "score_source": "judgment"} for c in ("color", "shape")]
    )
    languages = pa.table({"language": ["zh", "en", "en"]})
    return leaderboards_by_judge(stats, taxonomy, sources, languages).to_pylist()


def test_each_judges_leaderboard_by_hand():
    """Per judge, generator and scope (en, zh, pooled, bilingual): total and group views in
    points, competition rank within the scope (ties share 1), groups and capabilities used.
    By hand: j1 m1 en: attr (0.5 + 1) / 2 = 0.75, text 1/3, total 0.5417; zh attr 1; pooled color
    3/4, attr 0.875, total (0.875 + 1/3) / 2; bilingual: views and totals the mean of en and zh
    (text has no zh view: none), capabilities the fewer (zh's 1). m2: en 0, zh 1, pooled 2/4.
    j2: m1 en color 1 only; zh and so bilingual undefined: no total, no rank."""
    rows = _leaderboard()
    got = [
        (
            r["judge_id"], r["model_id"], r["language_scope"], r["hcq_total"], r["attr"],
            r["text"], r["rank"], r["n_groups"], r["n_capabilities"], r["hcq_total_frac"],
        )
        for r in rows
    ]  # fmt: skip
    en_total = (0.75 + THIRD) / 2
    pooled_total = (0.875 + THIRD) / 2
    expected = [
        ("j1", "m1", "en", 100 * en_total, 75.0, 100 * THIRD, 1, 2, 3, en_total),
        ("j1", "m1", "zh", 100.0, 100.0, None, 1, 1, 1, 1.0),
        ("j1", "m1", "pooled", 100 * pooled_total, 87.5, 100 * THIRD, 1, 2, 3, pooled_total),
        ("j1", "m1", "bilingual", 50 * (en_total + 1), 87.5, None, 1, 1, 1, (en_total + 1) / 2),
        ("j1", "m2", "en", 0.0, 0.0, None, 2, 1, 1, 0.0),
        ("j1", "m2", "zh", 100.0, 100.0, None, 1, 1, 1, 1.0),
        ("j1", "m2", "pooled", 50.0, 50.0, None, 2, 1, 1, 0.5),
        ("j1", "m2", "bilingual", 50.0, 50.0, None, 2, 1, 1, 0.5),
        ("j2", "m1", "en", 100.0, 100.0, None, 1, 1, 1, 1.0),
        ("j2", "m1", "zh", None, None, None, None, 0, 0, None),
        ("j2", "m1", "pooled", 100.0, 100.0, None, 1, 1, 1, 1.0),
        ("j2", "m1", "bilingual", None, None, None, None, 0, 0, None),
    ]
    assert [row[:3] for row in got] == [row[:3] for row in expected]
    for row, want in zip(got, expected, strict=True):
        assert row == pytest.approx(want), row[:3]
    assert {r["text_evidence"] for r in rows} == {"transcription"}
