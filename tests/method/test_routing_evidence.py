"""`method.routing.Evidence` (METHOD 12) on a hand world of three capabilities: the routing tables'
tests use one capability, one request per concept and every request with evidence, which left
the capability order, a request without evidence, a generator without a cost and the last folds
unchecked (`make mutation`, issue 36); and the small helpers of the paired table. Expected values
are worked out by hand in the comments."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from method.routing import decisions_table
from method.routing.evidence import (
    Evidence,
    language_mean,
    out_of_fold_predictions,
    select_epsilon,
)
from method.routing.paired import (
    choices_by_group,
    cost_saving,
    default_references,
    mean_routed_sums,
    multinomial_concept_weights,
    paired_differences,
)

# Reporting order c2, c1 (group g1), c3 (g2): not the alphabetical order.
CAPABILITIES = pa.Table.from_pylist(
    [
        {"capability": "c1", "group_key": "g1", "group_order": 1, "capability_order": 2},
        {"capability": "c3", "group_key": "g2", "group_order": 2, "capability_order": 1},
        {"capability": "c2", "group_key": "g1", "group_order": 1, "capability_order": 1},
    ]
)
# Requests (listed out of order): q1 k2 en fold 1, q2 k1 en 2, q3 k1 zh 3, q4 k3 en 4 (no
# evidence at all), q5 k3 zh 5.
REQUESTS = pa.Table.from_pylist(
    [
        {"prompt_id": p, "concept_id": c, "language": lang, "fold": f}
        for p, c, lang, f in (
            ("q3", "k1", "zh", 3),
            ("q1", "k2", "en", 1),
            ("q5", "k3", "zh", 5),
            ("q2", "k1", "en", 2),
            ("q4", "k3", "en", 4),
        )
    ]
)
# (model, prompt, capability): (valid yes, valid questions)
SCORES = {
    ("A", "q1", "c1"): (1, 2),
    ("A", "q1", "c3"): (3, 4),
    ("B", "q1", "c1"): (2, 2),
    ("A", "q2", "c2"): (1, 1),
    ("B", "q2", "c2"): (0, 1),
    ("A", "q3", "c3"): (2, 2),
    ("B", "q5", "c1"): (1, 3),
}
EVIDENCE = pa.Table.from_pylist(
    [
        {"model_id": m, "prompt_id": p, "capability": t, "score_num": y, "score_den": n}
        for (m, p, t), (y, n) in SCORES.items()
    ]
)
# B has no cost figure; C has one but no evidence.
GENERATORS = pa.Table.from_pylist(
    [
        {"model_id": "C", "cost_gpu_s_per_mp": 0.5},
        {"model_id": "B", "cost_gpu_s_per_mp": None},
        {"model_id": "A", "cost_gpu_s_per_mp": 2.0},
    ]
)
PROMPT = {"q1": 0, "q2": 1, "q3": 2, "q4": 3, "q5": 4}
CAP = {"c2": 0, "c1": 1, "c3": 2}  # the taxonomy's order


def hand_evidence() -> Evidence:
    """Built inside each test (milliseconds), not in a fixture: mutmut maps a function to the
    tests whose body calls it, and a module fixture's setup would hide `from_arrow` from them."""
    return Evidence.from_arrow(EVIDENCE, REQUESTS, CAPABILITIES, GENERATORS)


def test_evidence_arrays_from_arrow_by_hand():
    """Guards the dense arrays: requests sorted, prompts indexed against every request (q4 has
    no evidence row, so indexing against the evidence's own prompts would shift q5 onto q4),
    capabilities in the taxonomy's order (not sorted), each request's own concept and language
    (q2 and q3 share k1), the folds, a generator without a cost figure costing infinity, and
    `active` the capabilities each request's questions carry."""
    evidence = hand_evidence()
    assert evidence.models == ("A", "B")
    assert evidence.cost.tolist() == [2.0, np.inf]
    assert evidence.prompts == ("q1", "q2", "q3", "q4", "q5")
    assert evidence.taxonomy.capabilities == ("c2", "c1", "c3")
    assert (evidence.concepts, evidence.concept.tolist()) == (("k1", "k2", "k3"), [1, 0, 0, 2, 2])
    assert (evidence.languages, evidence.language.tolist()) == (("en", "zh"), [0, 0, 1, 0, 1])
    assert evidence.fold.tolist() == [1, 2, 3, 4, 5]
    num, den = np.zeros((2, 5, 3)), np.zeros((2, 5, 3))
    active = np.zeros((5, 3), dtype=bool)
    for (m, p, t), (y, n) in SCORES.items():
        num["AB".index(m), PROMPT[p], CAP[t]] = y
        den["AB".index(m), PROMPT[p], CAP[t]] = n
        active[PROMPT[p], CAP[t]] = True
    np.testing.assert_array_equal(evidence.num, num)
    np.testing.assert_array_equal(evidence.den, den)
    np.testing.assert_array_equal(evidence.active, active)


def test_fold_sums_cover_every_fold():
    """Guards the per-fold sums (index 0 unused): fold 5 (q5, zh: B's c1 1/3) and every other
    fold in its own slot and language; a fold range stopping early would drop folds 4 and 5."""
    evidence = hand_evidence()
    num, den = evidence.fold_sums()
    want_num, want_den = np.zeros((6, 2, 2, 3)), np.zeros((6, 2, 2, 3))
    fold = {"q1": 1, "q2": 2, "q3": 3, "q4": 4, "q5": 5}
    lang = {"q1": 0, "q2": 0, "q3": 1, "q4": 0, "q5": 1}
    for (m, p, t), (y, n) in SCORES.items():
        want_num[fold[p], "AB".index(m), lang[p], CAP[t]] += y
        want_den[fold[p], "AB".index(m), lang[p], CAP[t]] += n
    np.testing.assert_array_equal(num, want_num)
    np.testing.assert_array_equal(den, want_den)


def test_predict_uses_every_fold_but_the_excluded():
    """Guards Q-Profile's out-of-fold prediction: with fold 1 excluded the profile is folds 2-5,
    per language: en A c2 1/1, B c2 0/1; zh A c3 2/2, B c1 1/3. Restricted to each request's
    capabilities: q1 (c1, c3, en) none; q2 (c2) A 1, B 0; q3 (c3, zh) A 1; q4 nothing asked;
    q5 (c1, zh) B 1/3 (from fold 5 itself: only fold 1 is excluded)."""
    evidence = hand_evidence()
    got = evidence.predict([1], np.arange(5))
    nan = np.nan
    want = [[nan, nan], [1.0, 0.0], [1.0, nan], [nan, nan], [nan, 1 / 3]]
    assert got.dtype == float
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


def test_routed_quality_sums_each_capability_on_its_own():
    """Guards the routed generator's HCQ per language: the chosen records' sums per capability
    (not over capabilities), then Eq. 4. A on q1, q2, q4 (en): c2 1/1, c1 1/2, c3 3/4 -> g1
    (1 + 0.5) / 2, g2 0.75 -> 0.75; A on q3 and B on q5 (zh): c1 1/3, c3 2/2 -> (1/3 + 1) / 2."""
    evidence = hand_evidence()
    got = evidence.routed_quality(np.array([0, 0, 0, 0, 1]), np.arange(5))
    assert got.dtype == float
    np.testing.assert_allclose(got, [0.75, 2 / 3], rtol=0, atol=1e-15)


def test_decisions_without_a_prediction_are_null_not_nan():
    """Guards int_router_decisions' `predicted_quality_frac` null where the chosen generator has
    no out-of-fold prediction (NaN handed to Arrow as a float would be a NaN, which SQL averages
    and compares as a number): q1's capabilities (c1, c3 in en) have no evidence outside fold 1
    and q4 asks nothing, so Q-Profile-Q picks the cheaper A for both without a prediction."""
    epsilon = pa.Table.from_pylist([{"outer_fold": 1, "eps": 0.0, "is_selected": True}])
    table = decisions_table(EVIDENCE, REQUESTS, CAPABILITIES, GENERATORS, epsilon)
    rows = [r for r in table.to_pylist() if r["router"] == "q_profile_q"]
    by_prompt = {r["prompt_id"]: (r["model_id"], r["predicted_quality_frac"]) for r in rows}
    assert by_prompt["q1"] == ("A", None) and by_prompt["q4"] == ("A", None)
    values = table["predicted_quality_frac"].to_pylist()
    assert not any(v != v for v in values if v is not None)  # no NaN anywhere


def five_fold_world() -> Evidence:
    """One capability, one request per fold (r1..r5 in folds 1..5, en): A answers i of 5 valid
    questions on r_i, B 1 of 5 everywhere; B is the cheaper."""
    capabilities = pa.Table.from_pylist(
        [{"capability": "c", "group_key": "g", "group_order": 1, "capability_order": 1}]
    )
    requests = pa.Table.from_pylist(
        [
            {"prompt_id": f"r{f}", "concept_id": f"k{f}", "language": "en", "fold": f}
            for f in range(1, 6)
        ]
    )
    evidence = pa.Table.from_pylist(
        [
            {"model_id": m, "prompt_id": f"r{f}", "capability": "c", "score_num": y, "score_den": 5}
            for f in range(1, 6)
            for m, y in (("A", f), ("B", 1))
        ]
    )
    generators = pa.Table.from_pylist(
        [{"model_id": "A", "cost_gpu_s_per_mp": 2.0}, {"model_id": "B", "cost_gpu_s_per_mp": 1.0}]
    )
    return Evidence.from_arrow(evidence, requests, capabilities, generators)


def test_every_fold_is_predicted_out_of_fold():
    """Guards the out-of-fold loop over all five folds: r_f from the other four, A (15 - f) / 20
    and B 4/20; a loop stopping early would leave r4 and r5 unpredicted (NaN)."""
    got = out_of_fold_predictions(five_fold_world())
    want = [[(15 - f) / 20, 0.2] for f in range(1, 6)]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


def test_select_epsilon_predicts_every_inner_fold():
    """Guards the inner-fold search of outer fold 1: each of the inner folds 2-5 predicted from
    the other three (A at least 9/15, B 3/15: A chosen up to eps 0.1), so the routed quality is
    A's on r2..r5, (2 + 3 + 4 + 5) / 20 = 0.7 at every grid epsilon, equal to the best fixed
    generator A's: eps is the largest grid value, 0.1. Skipping inner folds (stopping at the outer
    fold, or early) leaves requests unpredicted, routed to the cheaper B (quality 0.35 or 0.2)."""
    search = select_epsilon(five_fold_world(), 1)
    assert search.outer_fold == 1
    assert search.grid_quality == pytest.approx([0.7] * 21, abs=1e-15)
    assert (search.best_fixed_quality, search.best_fixed_model) == (pytest.approx(0.7), "A")
    assert search.eps == 0.1


def test_language_mean_of_one_language_keeps_the_draws_apart():
    """Guards the mean over the language axis only: with one language and two draws, each draw
    keeps its own figure (a mean over every axis would return one number)."""
    np.testing.assert_array_equal(language_mean(np.array([[0.2], [0.4]])), [0.2, 0.4])


def test_mean_routed_sums_divide_by_the_number_of_draws():
    """Guards the uniform router's draw-averaged sums (ratio of expectations): two draws, all A
    then all B, per concept (one request each) A i/5 and B 1/5: the means are (i + 1) / 2 over
    5. A count started at 1 or stepping by 2 would divide by 3 or 4."""
    num, den = mean_routed_sums(five_fold_world(), [np.zeros(5, int), np.ones(5, int)], np.eye(5))
    np.testing.assert_array_equal(num.ravel(), [1.0, 1.5, 2.0, 2.5, 3.0])
    np.testing.assert_array_equal(den.ravel(), [5.0] * 5)


def test_cost_saving_unknown_when_either_cost_is():
    """Guards the cost saving: 1 - cost / reference, None when either cost is unknown (or the
    reference's is 0)."""
    assert cost_saving(1.5, 2.0) == 0.25
    assert cost_saving(None, 2.0) is None
    assert cost_saving(1.5, None) is None
    assert cost_saving(1.5, 0.0) is None


def test_default_references_are_the_two_best_fixed_generators():
    """Guards the default references: fixed routers only, by bilingual quality (a generator
    without one last), the router name breaking ties, two of them: c (0.7), then a over d (both
    0.5); b has no quality, q_profile_q is no fixed generator."""
    points = [
        {"router": "fixed:a", "bilingual_frac": 0.5},
        {"router": "fixed:b", "bilingual_frac": None},
        {"router": "fixed:c", "bilingual_frac": 0.7},
        {"router": "fixed:d", "bilingual_frac": 0.5},
        {"router": "q_profile_q", "bilingual_frac": 0.9},
    ]
    assert default_references(points) == ["c", "a"]


def test_select_epsilon_without_training_evidence_falls_back_to_zero():
    """Guards the search where no generator has a quality on the training folds (only r1, the
    outer fold itself, has evidence): no best fixed generator can be told, so the first model
    stands in with an undefined quality, and epsilon is 0 (Q-Profile-Q)."""
    capabilities = pa.Table.from_pylist(
        [{"capability": "c", "group_key": "g", "group_order": 1, "capability_order": 1}]
    )
    requests = pa.Table.from_pylist(
        [{"prompt_id": f"r{f}", "concept_id": f"k{f}", "language": "en", "fold": f} for f in (1, 2)]
    )
    evidence = pa.Table.from_pylist(
        [
            {"model_id": m, "prompt_id": "r1", "capability": "c", "score_num": 1, "score_den": 2}
            for m in ("A", "B")
        ]
    )
    generators = pa.Table.from_pylist(
        [{"model_id": "A", "cost_gpu_s_per_mp": 2.0}, {"model_id": "B", "cost_gpu_s_per_mp": 1.0}]
    )
    ev = Evidence.from_arrow(evidence, requests, capabilities, generators)
    search = select_epsilon(ev, 1)
    assert search.best_fixed_model == "A" and np.isnan(search.best_fixed_quality)
    assert search.eps == 0.0


def test_multinomial_concept_weights_are_numpys_multinomial_draws():
    """Guards the router's concept bootstrap weights: `draws` rows of a Multinomial(C, 1/C)
    vector from the seed's stream (numpy's own call, made here by hand), as float64: the seed
    dropped, the draws' count dropped or the probabilities C/C instead of 1/C would differ."""
    got = multinomial_concept_weights(3, 4, seed=7)
    want = np.random.default_rng(7).multinomial(3, [1 / 3] * 3, size=4)
    assert got.dtype == np.float64 and got.shape == (4, 3)
    np.testing.assert_array_equal(got, want)


def test_choices_by_group_index_models_against_every_judged_model():
    """Guards the decisions' model indices taken against all the evidence's models: a router
    that only ever chose B must map to B's index (1), not to the first of its own models."""
    ev = five_fold_world()
    table = pa.Table.from_pylist(
        [{"router": "r", "prompt_id": f"r{f}", "model_id": "B"} for f in (3, 1, 2, 5, 4)]
    )
    choices = choices_by_group(ev, table, "router")
    assert list(choices) == ["r"]
    assert choices["r"].tolist() == [1, 1, 1, 1, 1]


def fixed_decisions(models=("A", "B")) -> pa.Table:
    """int_router_decisions of the fixed routers of five_fold_world: every request to one model."""
    return pa.Table.from_pylist(
        [
            {"router": f"fixed:{m}", "prompt_id": f"r{f}", "model_id": m}
            for m in models
            for f in range(1, 6)
        ]
    )


NO_DRAWS = pa.table(
    {"draw": pa.array([], pa.int64()), "prompt_id": pa.array([], pa.string()),
     "model_id": pa.array([], pa.string())}
)  # fmt: skip


def test_paired_differences_over_five_concepts_by_hand():
    """Guards fct_router_paired on five concepts: B - A is 100 (5/25 - 15/25) = -40 points; each
    of `draws` draws (the seed's multinomial weights, as numpy draws them) scores A as
    sum(w_c c) / sum(w_c 5) and B as 0.2, and the interval is the 2.5 and 97.5 percentiles of
    those differences; a router against itself is 0 throughout. Non-inferior: the lower end above
    minus the margin. The cost saving 1 - 1/2 for B against A."""
    ev = five_fold_world()
    points = [
        {"router": "fixed:A", "gpu_s_per_mp": 2.0},
        {"router": "fixed:B", "gpu_s_per_mp": 1.0},
    ]
    got = paired_differences(ev, fixed_decisions(), NO_DRAWS, points, ["A"], 40, 3, 1.0)
    weights = np.random.default_rng(3).multinomial(5, [0.2] * 5, size=40)
    a = weights @ np.arange(1, 6) / (weights.sum(axis=1) * 5)
    lo, hi = np.nanquantile(100 * (0.2 - a), [0.025, 0.975])
    rows = got.to_pylist()
    assert [(r["router"], r["reference_model_id"]) for r in rows] == [
        ("fixed:A", "A"),
        ("fixed:B", "A"),
    ]
    assert rows[0]["diff"] == 0.0 and rows[0]["ci_lo"] == 0.0 and rows[0]["ci_hi"] == 0.0
    assert rows[1]["diff"] == pytest.approx(-40.0)
    assert (rows[1]["ci_lo"], rows[1]["ci_hi"]) == (pytest.approx(lo), pytest.approx(hi))
    assert lo < hi
    assert [r["non_inferior"] for r in rows] == [True, False]
    assert [r["cost_saving_frac"] for r in rows] == [0.0, 0.5]
    assert [(r["n_draws"], r["margin_points"]) for r in rows] == [(40, 1.0), (40, 1.0)]


def test_paired_differences_refuse_a_reference_never_judged():
    """Guards the refusal of a reference generator with no fixed router, naming it."""
    with pytest.raises(ValueError) as refused:
        paired_differences(five_fold_world(), fixed_decisions(), NO_DRAWS, [], ["Z"], 5, 1, 1.0)
    assert str(refused.value) == "reference model 'Z' has no fixed router (not judged)"


def test_paired_differences_without_a_cost_keep_their_types():
    """Guards fct_router_paired's declared schema where a column is null in every row (no cost
    figure: no cost saving)."""
    got = paired_differences(five_fold_world(), fixed_decisions(), NO_DRAWS, [], ["A"], 5, 1, 1.0)
    assert got.schema.field("cost_saving_frac").type == pa.float64()
    assert got.column("cost_saving_frac").to_pylist() == [None, None]
