"""The reliability marts through the real import and dbt build, checked by independent routes.

World: 200 simulated concepts, three generators. `qwen-image` is planted as the twin of
`ernie-image` (identical rates for every language and capability, independent outcomes);
`hidream-i1` sits far below both, so first place is between the twins.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from ingestion.sources.simulator import (
    SimulationConfig,
    calibrated_rates,
    load_table2,
    load_taxonomy,
    simulate,
)
from tests.helpers import build_warehouse as build_project_warehouse
from tests.helpers import query, warehouse_in

TWIN, ORIGINAL, FAR = "qwen-image", "ernie-image", "hidream-i1"
SCOPES = ("en", "zh", "bilingual")


def build_warehouse(bundle: Path, warehouse: Path) -> Path:
    """Import, then `dbt build` of the reliability marts and everything upstream (models and
    tests), so that these tests depend only on the models they check."""
    return build_project_warehouse(
        bundle, warehouse, ("+path:models/marts/reliability", "+path:models/marts/scoring")
    )


@pytest.fixture(scope="module")
def twin_world(tmp_path_factory):
    root = tmp_path_factory.mktemp("twins")
    taxonomy = load_taxonomy()
    # The shared capability shape (mix 0) keeps the world whose top-1 split the test below
    # describes; twins need no generator-specific shapes.
    planted = calibrated_rates(taxonomy, load_table2(), [ORIGINAL], mix=0.0)
    rates = {(TWIN, lang, t): r for (_, lang, t), r in planted.items()}
    simulate(
        root / "bundle",
        SimulationConfig(
            concepts=200,
            seed=11,
            models=[ORIGINAL, TWIN, FAR],
            rates=rates,
            shape_mix=0.0,
        ),
    )
    return build_warehouse(root / "bundle", warehouse_in(root / "twins-wh"))


@pytest.fixture(scope="module")
def hand_world(hand_published):
    """The session's hand warehouse (every mart built; read only here)."""
    return hand_published


@pytest.mark.parametrize("world", ["twin_world", "hand_world"])
def test_point_totals_equal_the_leaderboard(world, request):
    warehouse = request.getfixturevalue(world)
    rows = query(
        warehouse,
        """
        select l.model_id, l.language_scope, l.hcq_total_frac, r.hcq_total_frac, d.hcq_total_frac,
            l.rank, r.rank
        from marts.fct_hcq_leaderboard as l
        left join marts.fct_rank_reliability as r using (model_id, language_scope)
        left join intermediate.int_reliability_draws as d
            on d.draw_index = 0 and d.model_id = l.model_id
            and d.language_scope = l.language_scope
        where l.language_scope in ('en', 'zh', 'bilingual')
        """,
    )
    assert len(rows) == 3 * len({r[0] for r in rows})
    for model, scope, board, mart, draw0, board_rank, mart_rank in rows:
        if board is None:  # hand world: m2 has no zh text, still a total; nothing undefined
            assert mart is None and draw0 is None, (model, scope)
            continue
        assert abs(mart - board) <= 1e-12, (model, scope)
        assert abs(draw0 - board) <= 1e-12, (model, scope)
        assert mart_rank == board_rank, (model, scope)


@pytest.mark.parametrize("world", ["twin_world", "hand_world"])
def test_top1_sums_to_one_and_draw_count(world, request):
    warehouse = request.getfixturevalue(world)
    for scope, total, n_draws in query(
        warehouse,
        "select language_scope, sum(top1_prob), max(n_draws) from marts.fct_rank_reliability "
        "group by language_scope",
    ):
        assert total == pytest.approx(1.0, abs=1e-12), scope
        assert n_draws == 2000  # the reliability_bootstrap_draws default


def test_twins_are_not_separated(twin_world):
    (diff, lo, hi, excludes), (mirror_diff, mirror_lo, mirror_hi, _) = query(
        twin_world,
        f"""
        select diff, ci_lo, ci_hi, excludes_zero from marts.fct_pairwise_reliability
        where language_scope = 'bilingual' and model_a in ('{TWIN}', '{ORIGINAL}')
            and model_b in ('{TWIN}', '{ORIGINAL}')
        order by model_a = '{ORIGINAL}' desc
        """,
    )
    assert lo < 0 < hi and not excludes
    assert (mirror_diff, mirror_lo, mirror_hi) == pytest.approx((-diff, -hi, -lo))
    top1 = dict(
        query(
            twin_world,
            "select model_id, top1_prob from marts.fct_rank_reliability "
            "where language_scope = 'bilingual'",
        )
    )
    # First place is shared by the twins only. Under equal rates, P(twin A first) is itself
    # uniformly spread over worlds; this world (seed 11) lands near one half.
    assert top1[FAR] == 0.0
    assert top1[TWIN] + top1[ORIGINAL] == pytest.approx(1.0)
    assert 0.25 <= top1[ORIGINAL] <= 0.75, top1
    # Meanwhile the far model is separated from both, in every scope.
    assert all(
        ex
        for (ex,) in query(
            twin_world,
            f"select excludes_zero from marts.fct_pairwise_reliability where model_b = '{FAR}'",
        )
    )


def test_pairwise_and_rank_marts_match_the_draws(twin_world):
    draws = defaultdict(dict)
    for b, scope, model, total in query(
        twin_world,
        "select draw_index, language_scope, model_id, hcq_total_frac "
        "from intermediate.int_reliability_draws where draw_index > 0",
    ):
        draws[scope].setdefault(b, {})[model] = total
    for scope in SCOPES:
        per_draw = list(draws[scope].values())
        for a, b, lo, hi in query(
            twin_world,
            "select model_a, model_b, ci_lo, ci_hi from marts.fct_pairwise_reliability "
            f"where language_scope = '{scope}'",
        ):
            d = sorted(100 * (x[a] - x[b]) for x in per_draw)
            assert lo == pytest.approx(np.percentile(d, 2.5), abs=1e-9)
            assert hi == pytest.approx(np.percentile(d, 97.5), abs=1e-9)
        for model, top1, rank_lo, rank_hi in query(
            twin_world,
            "select model_id, top1_prob, rank_lo, rank_hi from marts.fct_rank_reliability "
            f"where language_scope = '{scope}'",
        ):
            ranks = sorted(1 + sum(v > x[model] for v in x.values()) for x in per_draw)
            wins = sum(1 / sum(v == max(x.values()) for v in x.values()) for x in per_draw
                       if x[model] == max(x.values()))  # fmt: skip
            assert top1 == pytest.approx(wins / len(per_draw))
            assert rank_lo == ranks[math.ceil(0.025 * len(ranks)) - 1]
            assert rank_hi == ranks[math.ceil(0.975 * len(ranks)) - 1]


def test_prompt_stats_roll_up_to_capability_evidence(twin_world):
    (mismatches,) = query(
        twin_world,
        """
        with rolled as (
            select model_id, language, capability, sum(n_questions) as n_questions,
                sum(n_valid) as n_valid, sum(n_valid_yes) as n_valid_yes,
                sum(n_text_images) as n_text_images,
                sum(text_distance_utf16) as text_distance_utf16,
                sum(text_length_utf16) as text_length_utf16
            from intermediate.int_prompt_sufficient_stats
            group by all
        )
        select count(*) from (
            (select * from rolled except
             select model_id, language, capability, n_questions, n_valid, n_valid_yes,
                n_text_images, text_distance_utf16, text_length_utf16
             from intermediate.int_capability_evidence)
            union all
            (select model_id, language, capability, n_questions, n_valid, n_valid_yes,
                n_text_images, text_distance_utf16, text_length_utf16
             from intermediate.int_capability_evidence except select * from rolled)
        )
        """,
    )[0]
    assert mismatches == 0


def hcq(scores: dict[str, float | None], groups: dict[str, str]) -> float:
    by_group = defaultdict(list)
    for cap, s in scores.items():
        if s is not None:
            by_group[groups[cap]].append(s)
    views = [sum(v) / len(v) for v in by_group.values()]
    return sum(views) / len(views)


def test_masking_effect_against_question_records(twin_world):
    groups = dict(query(twin_world, "select capability, group_key from seeds.capabilities"))
    # Unmasked Eq. 2: every answered question counted, a missing judgment out of both totals
    # (METHOD 6); text keeps its transcription score.
    unmasked = defaultdict(dict)
    for model, lang, cap, score in query(
        twin_world,
        """
        select model_id, language, capability, avg(outcome)
        from marts.fct_question_records where capability <> 'text_rendering' group by all
        union all
        select model_id, language_scope, capability, score_frac from marts.fct_capability_scores
        where capability = 'text_rendering' and language_scope in ('en', 'zh')
        """,
    ):
        unmasked[model, lang][cap] = score
    totals = {key: hcq(scores, groups) for key, scores in unmasked.items()}
    rows = query(
        twin_world,
        "select model_id, language_scope, hcq_masked, hcq_unmasked, rank_masked, rank_unmasked, "
        "spearman_rho, has_moved from marts.fct_masking_effect",
    )
    board_rows = query(
        twin_world, "select model_id, language_scope, hcq_total from marts.fct_hcq_leaderboard"
    )
    board = {(m, s): t for m, s, t in board_rows}
    for model, scope, masked, unmasked_total, rank_m, rank_u, _, moved in rows:
        assert masked == pytest.approx(board[model, scope], abs=1e-9)
        if scope == "bilingual":
            want = (totals[model, "en"] + totals[model, "zh"]) / 2
        else:
            want = totals[model, scope]
        assert unmasked_total == pytest.approx(100 * want, abs=1e-9)
        assert moved == (rank_m != rank_u)
    # Ranks (1 = best) and Spearman's rho by hand: totals are distinct floats, so no ties and
    # rho = 1 - 6 sum(d^2) / (n (n^2 - 1)).
    for scope in {s for _, s, *_ in rows}:
        in_scope = [r for r in rows if r[1] == scope]
        masked_totals = [r[2] for r in in_scope]
        unmasked_totals = [r[3] for r in in_scope]
        n = len(in_scope)
        d2 = 0
        for _, _, masked, unmasked_total, rank_m, rank_u, _, _ in in_scope:
            assert rank_m == 1 + sum(x > masked for x in masked_totals)
            assert rank_u == 1 + sum(x > unmasked_total for x in unmasked_totals)
            d2 += (rank_m - rank_u) ** 2
        rho = 1 - 6 * d2 / (n * (n * n - 1))
        assert all(r[6] == pytest.approx(rho, abs=1e-12) for r in in_scope), scope
    # Counting masked descendants as failures can only lower a total.
    assert all(u < m for _, _, m, u, *_ in rows)


def test_aggregation_robustness_against_question_records(twin_world):
    want = dict(
        ((lang, cap), ratio)
        for lang, cap, ratio in query(
            twin_world,
            """
            with per_prompt as (
                select model_id, language, capability, prompt_id, count(*) as n
                from marts.fct_question_records where is_valid group by all
            ),
            per_model as (
                select model_id, language, capability, avg(n) * avg(1.0 / n) as ratio
                from per_prompt group by all
            )
            select language, capability, avg(ratio) from per_model group by all
            """,
        )
    )
    got = query(
        twin_world,
        "select language, capability, scale, variance_ratio, short_error_question_points, "
        "short_error_prompt_points from marts.fct_aggregation_robustness",
    )
    assert {scale for _, _, scale, *_ in got} == {"full"}  # 200 concepts: no 1,000-concept rows
    for lang, cap, _, ratio, error_q, error_p in got:
        if cap == "__total__":
            assert ratio > 1
            # The simulator writes few prompts with at most 3 questions; where it does, the
            # prompt-first rule weighs their errors more.
            assert error_q is not None and error_p > error_q
        else:
            # a ratio exactly where some prompt has the capability
            assert (ratio is None) == ((lang, cap) not in want), (lang, cap)
            if ratio is not None:
                assert ratio == pytest.approx(want[lang, cap], rel=1e-12)
                assert ratio >= 1
