"""The routing tables the dbt Python models return (`method.routing`: `epsilon_table`,
`decisions_table`, `uniform_draws_table`, `paired_table`, `frontier_table`) on worlds small
enough to work out by hand; every expected value is derived in the comments, none by calling the
code under test.

The worlds have one capability, so a capability score is HCQ (Eq. 4) and a routed quality is the
chosen generators' summed valid yes over their summed valid questions.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from method.routing import (
    decisions_table,
    epsilon_table,
    frontier_table,
    paired_table,
    selected_eps,
    uniform_draws_table,
)

CAPABILITIES = pa.Table.from_pylist(
    [{"capability": "c", "group_key": "G", "group_order": 1, "capability_order": 1}]
)
# METHOD 12's grid: 0 to 0.10 in steps of 0.005
GRID = [round(0.005 * i, 3) for i in range(21)]


def router_world(requests, scores, costs):
    """(evidence, requests, capabilities, generators) tables. `requests`: (prompt_id, concept_id,
    language, fold); `scores`: {(model_id, prompt_id): (valid yes, valid questions)}."""
    evidence = pa.Table.from_pylist(
        [
            {"model_id": m, "prompt_id": p, "capability": "c", "score_num": y, "score_den": n}
            for (m, p), (y, n) in scores.items()
        ]
    )
    request_table = pa.Table.from_pylist(
        [
            {"prompt_id": p, "concept_id": c, "language": lang, "fold": f}
            for p, c, lang, f in requests
        ]
    )
    generators = pa.Table.from_pylist(
        [{"model_id": m, "cost_gpu_s_per_mp": cost} for m, cost in costs.items()]
    )
    return evidence, request_table, CAPABILITIES, generators


# -- int_router_decisions ---------------------------------------------------------------------

# Three requests, one per fold, 30 valid questions each; A costs 2, B costs 1, so B is the cheaper
# although A sorts first (a tie broken by model id would pick A, one broken by cost picks B).
#            r1      r2      r3
#   A       15/30   18/30   24/30
#   B       15/30   18/30   20/30
DECISION_WORLD = router_world(
    [("r1", "k1", "en", 1), ("r2", "k2", "en", 2), ("r3", "k3", "en", 3)],
    {
        ("A", "r1"): (15.0, 30.0),
        ("A", "r2"): (18.0, 30.0),
        ("A", "r3"): (24.0, 30.0),
        ("B", "r1"): (15.0, 30.0),
        ("B", "r2"): (18.0, 30.0),
        ("B", "r3"): (20.0, 30.0),
    },
    {"A": 2.0, "B": 1.0},
)
# Out of fold, each request is predicted from the other two (pooled sums):
#   r1 from r2 + r3: A 42/60 = .7,  B 38/60 (A ahead by 4/60 = .0667)
#   r2 from r1 + r3: A 39/60 = .65, B 35/60 (A ahead by 4/60)
#   r3 from r1 + r2: A 33/60,       B 33/60 (a tie: the cheaper B)
PREDICTED = {
    ("r1", "A"): 42 / 60,
    ("r1", "B"): 38 / 60,
    ("r2", "A"): 39 / 60,
    ("r2", "B"): 35 / 60,
    ("r3", "A"): 33 / 60,
    ("r3", "B"): 33 / 60,
}
# int_router_epsilon's selected rows: fold 1 at .07 (>= 4/60, so r1 goes to B), fold 2 at .04
# (< 4/60, so r2 stays with A), fold 3 at 0; the rows not selected must not count.
EPSILON = pa.Table.from_pylist(
    [
        {"outer_fold": 1, "eps": 0.0, "is_selected": False},
        {"outer_fold": 1, "eps": 0.07, "is_selected": True},
        {"outer_fold": 2, "eps": 0.04, "is_selected": True},
        {"outer_fold": 2, "eps": 0.1, "is_selected": False},
        {"outer_fold": 3, "eps": 0.0, "is_selected": True},
    ]
)


def test_selected_eps_is_the_folds_selected_row_and_zero_without_one():
    assert list(selected_eps(EPSILON, np.array([1, 2, 3, 4, 1]))) == [0.07, 0.04, 0.0, 0.0, 0.07]


def test_router_decisions_by_hand():
    got = decisions_table(*DECISION_WORLD, EPSILON)
    assert [(f.name, f.type) for f in got.schema] == [
        ("router", pa.string()),
        ("grid_eps", pa.float64()),
        ("eps", pa.float64()),
        ("prompt_id", pa.string()),
        ("model_id", pa.string()),
        ("predicted_quality_frac", pa.float64()),
    ]
    # routers: q_profile_q, q_profile_c, oracle, fixed:A, fixed:B, then the 21 grid epsilons,
    # each with its three requests in prompt order
    assert got.num_rows == (5 + len(GRID)) * 3
    rows = got.to_pylist()
    assert [r["prompt_id"] for r in rows] == ["r1", "r2", "r3"] * (5 + len(GRID))

    def picks(router, grid_eps=None):
        mine = [r for r in rows if r["router"] == router and r["grid_eps"] == grid_eps]
        return [(r["prompt_id"], r["model_id"], r["eps"]) for r in mine], mine

    # Q-Profile-Q (eps 0): r1 A (.7 > 38/60), r2 A, r3 the tie at 33/60 -> B (cheaper)
    assert picks("q_profile_q")[0] == [("r1", "A", None), ("r2", "A", None), ("r3", "B", None)]
    # Q-Profile-C at each fold's epsilon: r1 (.07 >= 4/60) -> B; r2 (.04 < 4/60) -> A; r3 -> B
    assert picks("q_profile_c")[0] == [("r1", "B", 0.07), ("r2", "A", 0.04), ("r3", "B", 0.0)]
    # oracle on the realised request quality: r1 and r2 tie (15/30, 18/30) -> B; r3 A (24 > 20)
    oracle, oracle_rows = picks("oracle")
    assert oracle == [("r1", "B", None), ("r2", "B", None), ("r3", "A", None)]
    assert [r["predicted_quality_frac"] for r in oracle_rows] == pytest.approx(
        [15 / 30, 18 / 30, 24 / 30]
    )
    assert [m for _, m, _ in picks("fixed:A")[0]] == ["A", "A", "A"]
    assert [m for _, m, _ in picks("fixed:B")[0]] == ["B", "B", "B"]
    # the grid: r1 and r2 go to B once eps reaches 4/60 = .0667, i.e. from the grid's .07;
    # r3 is B throughout
    for eps in GRID:
        expected = "B" if eps >= 0.07 else "A"
        got_picks, _ = picks("q_profile_c", eps)
        assert got_picks == [("r1", expected, eps), ("r2", expected, eps), ("r3", "B", eps)]
    # every non-oracle row carries the out-of-fold prediction of the generator it chose
    for r in rows:
        if r["router"] != "oracle":
            expected = PREDICTED[r["prompt_id"], r["model_id"]]
            assert r["predicted_quality_frac"] == pytest.approx(expected)


# -- int_router_epsilon ---------------------------------------------------------------------

# Two requests, r1 in fold 1 and r2 in fold 2, 400 valid questions each; A costs 1, B costs 2.
#            r1        r2
#   A      240/400   267/400  (.6, .6675)
#   B      320/400   280/400  (.8, .7)
EPSILON_WORLD = router_world(
    [("r1", "k1", "en", 1), ("r2", "k2", "en", 2)],
    {
        ("A", "r1"): (240.0, 400.0),
        ("A", "r2"): (267.0, 400.0),
        ("B", "r1"): (320.0, 400.0),
        ("B", "r2"): (280.0, 400.0),
    },
    {"A": 1.0, "B": 2.0},
)


def test_router_epsilon_by_hand():
    got = epsilon_table(*EPSILON_WORLD)
    assert [(f.name, f.type) for f in got.schema] == [
        ("outer_fold", pa.int64()),
        ("eps", pa.float64()),
        ("inner_quality_frac", pa.float64()),
        ("best_fixed_quality_frac", pa.float64()),
        ("best_fixed_model_id", pa.string()),
        ("is_selected", pa.bool_()),
    ]
    rows = got.to_pylist()
    assert [r["outer_fold"] for r in rows] == [f for f in range(1, 6) for _ in GRID]
    assert [r["eps"] for r in rows] == pytest.approx(GRID * 5)
    by_fold = {f: [r for r in rows if r["outer_fold"] == f] for f in range(1, 6)}
    # Outer folds 3-5 train on r1 and r2. Inner fold 1 (r1) is predicted from fold 2 alone:
    # A .6675, B .7, so B leads by .0325 and r1 goes to the cheaper A from eps .035 on. Inner
    # fold 2 (r2) is predicted from r1: B leads by .2, more than any grid eps, so r2 stays B.
    # Routed quality: eps <= .03: B, B = (320 + 280) / 800 = .75; eps >= .035: A, B = (240 +
    # 280) / 800 = .65. Best fixed: B (.75; A is (240 + 267) / 800 = .63375). Largest eps whose
    # quality is not below .75: .03.
    for fold in (3, 4, 5):
        mine = by_fold[fold]
        expected = [0.75 if eps <= 0.03 else 0.65 for eps in GRID]
        assert [r["inner_quality_frac"] for r in mine] == pytest.approx(expected)
        assert {r["best_fixed_model_id"] for r in mine} == {"B"}
        assert [r["best_fixed_quality_frac"] for r in mine] == pytest.approx([0.75] * len(GRID))
        assert [r["eps"] for r in mine if r["is_selected"]] == pytest.approx([0.03])
    # Outer fold 1 trains on r2 alone; its inner fold 2 is predicted from folds 3-5, which hold
    # nothing: no prediction, so the cheapest generator, A, at every eps: .6675, below B's .7.
    # Nothing clears the best fixed generator: eps 0 (Q-Profile-Q).
    # Outer fold 2 likewise trains on r1 alone: A's .6 at every eps against B's .8.
    for fold, routed, best in ((1, 267 / 400, 280 / 400), (2, 240 / 400, 320 / 400)):
        mine = by_fold[fold]
        assert [r["inner_quality_frac"] for r in mine] == pytest.approx([routed] * len(GRID))
        assert {r["best_fixed_model_id"] for r in mine} == {"B"}
        assert mine[0]["best_fixed_quality_frac"] == pytest.approx(best)
        assert [r["eps"] for r in mine if r["is_selected"]] == [0.0]


# -- int_router_uniform_draws ---------------------------------------------------------------


def test_uniform_draws_table_by_hand():
    requests = pa.Table.from_pylist([{"prompt_id": p} for p in ("p2", "p1", "p3")])
    evidence = pa.Table.from_pylist([{"model_id": m} for m in ("gB", "gA", "gB", "gA", "gB")])
    got = uniform_draws_table(requests, evidence, seed=7, draws=4)
    assert [(f.name, f.type) for f in got.schema] == [
        ("draw", pa.int64()),
        ("prompt_id", pa.string()),
        ("model_id", pa.string()),
    ]
    # draw 1..4, each over the prompts in sorted order
    assert got["draw"].to_pylist() == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    assert got["prompt_id"].to_pylist() == ["p1", "p2", "p3"] * 4
    # the models sorted by id (gA = 0, gB = 1), indexed by numpy's generator seeded with 7:
    # one integer in [0, 2) per draw x request, drawn in one call
    index = np.random.default_rng(7).integers(0, 2, size=(4, 3)).ravel()
    assert got["model_id"].to_pylist() == [("gA", "gB")[i] for i in index]


# -- int_router_paired ----------------------------------------------------------------------

# One concept in two languages: every concept-bootstrap draw holds it once, so each interval
# collapses to its point. Ten valid questions per request.
#            en      zh     bilingual (50/50)
#   A       6/10    4/10    .5
#   B       8/10    6/10    .7
PAIRED_WORLD = router_world(
    [("k1_en", "k1", "en", 1), ("k1_zh", "k1", "zh", 1)],
    {
        ("A", "k1_en"): (6.0, 10.0),
        ("A", "k1_zh"): (4.0, 10.0),
        ("B", "k1_en"): (8.0, 10.0),
        ("B", "k1_zh"): (6.0, 10.0),
    },
    {"A": 2.0, "B": 4.0},
)


def decision(router, prompt, model, grid_eps=None):
    return {"router": router, "grid_eps": grid_eps, "prompt_id": prompt, "model_id": model}


def point(router, cost, bilingual, grid_eps=None):
    return {
        "router": router,
        "grid_eps": grid_eps,
        "gpu_s_per_mp": cost,
        "bilingual_frac": bilingual,
    }


PAIRED_DECISIONS = pa.Table.from_pylist(
    [
        decision("fixed:A", "k1_en", "A"),
        decision("fixed:A", "k1_zh", "A"),
        decision("fixed:B", "k1_en", "B"),
        decision("fixed:B", "k1_zh", "B"),
        decision("q_profile_q", "k1_en", "B"),  # en .8, zh .4 -> .6
        decision("q_profile_q", "k1_zh", "A"),
        decision("q_profile_c", "k1_en", "A"),  # en .6, zh .6 -> .6
        decision("q_profile_c", "k1_zh", "B"),
        # a grid row of the same router: the frontier's, never compared (all B would be .7)
        decision("q_profile_c", "k1_en", "B", grid_eps=0.05),
        decision("q_profile_c", "k1_zh", "B", grid_eps=0.05),
    ]
)
# the uniform router: draw 1 all A, draw 2 all B; scored from the draw-averaged sums:
# en (6 + 8) / 2 of 10 = .7, zh (4 + 6) / 2 of 10 = .5 -> .6
PAIRED_RANDOM_DRAWS = pa.Table.from_pylist(
    [
        {"draw": 1, "prompt_id": "k1_en", "model_id": "A"},
        {"draw": 1, "prompt_id": "k1_zh", "model_id": "A"},
        {"draw": 2, "prompt_id": "k1_en", "model_id": "B"},
        {"draw": 2, "prompt_id": "k1_zh", "model_id": "B"},
    ]
)
PAIRED_POINTS = pa.Table.from_pylist(
    [
        point("fixed:A", 2.0, 0.5),
        point("fixed:B", 4.0, 0.7),
        point("q_profile_q", 3.0, 0.6),
        point("q_profile_c", 2.5, 0.6),
        point("uniform_random", 3.0, 0.6),
        point("q_profile_c", 9.0, 0.7, grid_eps=0.05),  # not a router proper: ignored
    ]
)


def test_router_paired_by_hand():
    got = paired_table(
        *PAIRED_WORLD,
        PAIRED_DECISIONS,
        PAIRED_RANDOM_DRAWS,
        PAIRED_POINTS,
        references=[],
        draws=50,
        seed=3,
        margin_points=1.0,
    )
    assert [(f.name, f.type) for f in got.schema] == [
        ("router", pa.string()),
        ("reference_model_id", pa.string()),
        ("diff", pa.float64()),
        ("ci_lo", pa.float64()),
        ("ci_hi", pa.float64()),
        ("cost_saving_frac", pa.float64()),
        ("non_inferior", pa.bool_()),
        ("margin_points", pa.float64()),
        ("n_draws", pa.int64()),
    ]
    # default references: the two best fixed generators, B (.7) then A (.5); routers sorted.
    # diff in points against B: A -20, B 0, the rest -10; against A: A 0, B +20, the rest +10.
    # cost saving 1 - cost / reference cost: against B (4): .5, 0, .375, .25, .25;
    # against A (2): 0, -1, -.25, -.5, -.5. Non-inferior: ci_lo > -1 point.
    expected = [
        ("fixed:A", "B", -20.0, 0.5, False),
        ("fixed:B", "B", 0.0, 0.0, True),
        ("q_profile_c", "B", -10.0, 0.375, False),
        ("q_profile_q", "B", -10.0, 0.25, False),
        ("uniform_random", "B", -10.0, 0.25, False),
        ("fixed:A", "A", 0.0, 0.0, True),
        ("fixed:B", "A", 20.0, -1.0, True),
        ("q_profile_c", "A", 10.0, -0.25, True),
        ("q_profile_q", "A", 10.0, -0.5, True),
        ("uniform_random", "A", 10.0, -0.5, True),
    ]
    rows = got.to_pylist()
    assert [(r["router"], r["reference_model_id"]) for r in rows] == [e[:2] for e in expected]
    for r, (_, _, diff, saving, non_inferior) in zip(rows, expected, strict=True):
        assert r["diff"] == pytest.approx(diff, abs=1e-9)
        assert r["ci_lo"] == pytest.approx(diff, abs=1e-9)
        assert r["ci_hi"] == pytest.approx(diff, abs=1e-9)
        assert r["cost_saving_frac"] == pytest.approx(saving)
        assert r["non_inferior"] is non_inferior
        assert (r["margin_points"], r["n_draws"]) == (1.0, 50)


# -- int_router_frontier --------------------------------------------------------------------


def test_router_frontier_by_hand():
    def row(router, cost, en, zh, grid_eps=None):
        return {
            "router": router,
            "grid_eps": grid_eps,
            "en_frac": en,
            "zh_frac": zh,
            "bilingual_frac": (en + zh) / 2,
            "gpu_s_per_mp": cost,
        }

    points = pa.Table.from_pylist(
        [
            row("q_profile_q", 1.1, 0.9, 0.9),  # not a frontier point
            row("q_profile_c", 2.0, 0.70, 0.74, grid_eps=0.0),  # (2.0, 72)
            row("q_profile_c", 1.5, 0.70, 0.70, grid_eps=0.005),  # (1.5, 70)
            row("q_profile_c", 1.2, 0.50, 0.60, grid_eps=0.01),  # (1.2, 55)
            row("fixed:A", 1.0, 0.4, 0.6),  # (1.0, 50)
            row("fixed:B", 3.0, 0.7, 0.7),  # (3.0, 70)
        ]
    )
    got = frontier_table(points)
    assert [(f.name, f.type) for f in got.schema] == [
        ("point_kind", pa.string()),
        ("router", pa.string()),
        ("eps", pa.float64()),
        ("model_id", pa.string()),
        ("en", pa.float64()),
        ("zh", pa.float64()),
        ("bilingual", pa.float64()),
        ("gpu_s_per_mp", pa.float64()),
        ("on_frontier", pa.bool_()),
        ("frontier_quality", pa.float64()),
        ("is_live_eps", pa.bool_()),
        ("aiq", pa.float64()),
        ("aiq_fixed_only", pa.float64()),
    ]
    rows = got.to_pylist()
    # grid points, then the fixed generators, each in input order
    assert [(r["point_kind"], r["router"], r["eps"], r["model_id"]) for r in rows] == [
        ("q_profile_c", "q_profile_c", 0.0, None),
        ("q_profile_c", "q_profile_c", 0.005, None),
        ("q_profile_c", "q_profile_c", 0.01, None),
        ("fixed", "fixed:A", None, "A"),
        ("fixed", "fixed:B", None, "B"),
    ]
    # Hull: (1.2, 55) lies below the segment (1, 50) -> (1.5, 70), which passes 58 there; (3, 70)
    # is dominated by (2, 72). Vertices: (1, 50), (1.5, 70), (2, 72); flat at 72 after 2.
    assert [r["on_frontier"] for r in rows] == [True, True, False, True, False]
    assert [r["frontier_quality"] for r in rows] == pytest.approx([72, 70, 58, 50, 72])
    assert [(r["en"], r["zh"], r["bilingual"]) for r in rows] == [
        (pytest.approx(70), pytest.approx(74), pytest.approx(72)),
        (pytest.approx(70), pytest.approx(70), pytest.approx(70)),
        (pytest.approx(50), pytest.approx(60), pytest.approx(55)),
        (pytest.approx(40), pytest.approx(60), pytest.approx(50)),
        (pytest.approx(70), pytest.approx(70), pytest.approx(70)),
    ]
    # live eps: the largest grid eps not below the best fixed generator (B, 70): .005 (eps 0
    # clears it too, .01 does not)
    assert [r["is_live_eps"] for r in rows] == [False, True, False, False, False]
    # AIQ over costs [1, 3] (cheapest to best fixed generator), divided by the width 2:
    # (1, 1.5): (50 + 70) / 2 * .5 = 30; (1.5, 2): (70 + 72) / 2 * .5 = 35.5; (2, 3): 72
    # -> 137.5 / 2 = 68.75. The fixed generators' hull alone is the segment (1, 50) -> (3, 70):
    # mean 60.
    assert [r["aiq"] for r in rows] == pytest.approx([68.75] * 5)
    assert [r["aiq_fixed_only"] for r in rows] == pytest.approx([60.0] * 5)
