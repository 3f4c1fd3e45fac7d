"""The demo world through the real import and dbt build lands within 3 points of Table 2, and its
router tells Table 4's story.

The demo warehouse is the session's one (`demo_warehouse` in tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.helpers import query

# The demo world built whole (about 45 s): `make validate`, not CI (docs/testing.md, "Tiers"); the
# simulator's own calibration to Table 2, without a build, stays in CI
# (tests/ingestion/sources/test_simulator_calibration.py)
pytestmark = pytest.mark.validation

TOLERANCE_POINTS = 3.0


def test_demo_leaderboard_matches_table2(demo_warehouse):
    warehouse = demo_warehouse
    # Table 2 is a seed in the same warehouse; unpivot the leaderboard to compare view by view.
    rows = query(
        warehouse,
        """
        with leaderboard as (
            unpivot (
                select model_id, language_scope, hcq_total as total, entities, text, attributes,
                    relations, semantics
                from marts.fct_hcq_leaderboard
                where language_scope in ('en', 'zh')
            ) on total, entities, text, attributes, relations, semantics
            into name view value score
        )
        select t.model_id, t.language, t.view, t.score, l.score
        from seeds.paper_table2 as t
        left join leaderboard as l
            on l.model_id = t.model_id and l.language_scope = t.language and l.view = t.view
        """,
    )
    assert len(rows) == 13 * 2 * 6
    deviations = {(m, lang, view): abs(paper - got) for m, lang, view, paper, got in rows}
    worst = max(deviations, key=deviations.get)
    print(f"\nworst deviation from Table 2: {deviations[worst]:.2f} points at {worst}")
    assert all(d <= TOLERANCE_POINTS for d in deviations.values()), worst


def test_demo_router_tells_table4s_story(demo_warehouse):
    """Table 4 (issue 13): Q-Profile-C matches ERNIE-Image's bilingual score (within 0.3 points)
    for clearly less GPU-s/MP, and Q-Profile-Q scores above every fixed generator. The paper's
    figures are 89.51 vs 89.51 at 21.3% less; at paper scale bench/routing.py checks 15% or more,
    at demo scale (fewer requests, folds of 500 concepts) at least 5% must remain."""
    summary = {
        router: (bilingual, cost)
        for router, bilingual, cost in query(
            demo_warehouse,
            "select router, bilingual, gpu_s_per_mp from marts.agg_router_summary",
        )
    }
    ernie, qc, qq = summary["fixed:ernie-image"], summary["q_profile_c"], summary["q_profile_q"]
    fixed = {r: q for r, (q, _) in summary.items() if r.startswith("fixed:")}
    saving = 1 - qc[1] / ernie[1]
    best = max(fixed.values())
    print(
        f"\nQ-Profile-C {qc[0]:.2f} at {qc[1]:.2f} GPU-s/MP, ERNIE {ernie[0]:.2f} at {ernie[1]:.2f}"
        f" ({100 * saving:.1f}% saved); Q-Profile-Q {qq[0]:.2f}, best fixed {best:.2f}"
    )
    assert abs(qc[0] - ernie[0]) <= 0.3
    assert saving >= 0.05
    assert all(qq[0] > quality for quality in fixed.values()), fixed
