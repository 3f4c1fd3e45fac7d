"""`method.subsets.tables` and `validation_cases` (METHOD 16) on small worlds whose scores vary by
concept: what the adapters hand on (the references' availability, the drawn concepts, the plan
each estimator's sizes, the bilingual pair, the scope) is checked against the building blocks
called by hand, and coverage, restriction, the plan's inclusion probabilities and the scope by
hand. Written for mutants every test survived (mutation testing, issue 36): the older worlds
scored every concept alike, where any plan gives the same estimate."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from method.bootstrap import ConceptStats, stats_from_arrow
from method.subsets.estimator import Predictor, estimate
from method.subsets.items import irt_sizes
from method.subsets.plans import STRATEGIES, Planner, make_plan, pps_probabilities
from method.subsets.tables import (
    SUBSET_ESTIMATES_SCHEMA,
    coverage,
    fully_evaluated,
    planned_inclusion,
    restrict_models,
    subset_estimates,
    subset_validation,
    validation_scope,
)
from method.subsets.validation import VALIDATION_BUDGETS, summarise_validation, validation_cases

CAPABILITIES = pa.table(
    {
        "capability": ["c1", "c2", "c3"],
        "group_key": ["g1", "g2", "g2"],
        "group_order": [1, 2, 2],
        "capability_order": [1, 2, 3],
    }
)
SCORE_SOURCES = pa.table({"capability": ["c1", "c2", "c3"], "score_source": ["judgment"] * 3})
CONCEPTS = [f"k{i}" for i in range(8)]
EVERY_PROMPT = [(k, lang) for k in CONCEPTS for lang in ("en", "zh")]


# r1's one valid question of c3 (k0 in English, right): a capability of total exactly 1
ONE_QUESTION = {
    "concept_id": "k0", "model_id": "r1", "language": "en", "capability": "c3",
    "score_num": 1, "score_den": 1,
}  # fmt: skip


def bilingual_total(num, den) -> float:
    """Eq. 2-4 of summed statistics [L, T] in this taxonomy (g1 = c1, g2 = c2 and c3) by hand:
    per language the mean of the groups' mean defined scores, then the mean of the languages."""
    per_language = []
    for li in range(2):
        views = []
        for group in ((0,), (1, 2)):
            scores = [num[li, t] / den[li, t] for t in group if den[li, t] > 0]
            if scores:
                views.append(sum(scores) / len(scores))
        per_language.append(sum(views) / len(views))
    return sum(per_language) / 2


def tables(models: dict, extra: tuple[dict, ...] = ()) -> tuple[pa.Table, pa.Table]:
    """(int_prompt_sufficient_stats, int_prompt_coverage) of `models`: name -> (prompts, the
    capabilities it has questions of). Valid yes of 10 vary by model, concept, language and
    capability; every answer of a model named z... was invalid (0 of 0)."""
    rows, covered = [], []
    for mi, (model, (prompts, capabilities)) in enumerate(models.items()):
        for k, lang in prompts:
            covered.append({"model_id": model, "concept_id": k, "language": lang})
            ki, li = CONCEPTS.index(k), ("en", "zh").index(lang)
            for ti, cap in enumerate(("c1", "c2", "c3")):
                if cap in capabilities:
                    yes = (3 * ki + 5 * mi + 2 * li + 4 * ti) % 9 + 1
                    valid = 0 if model.startswith("z") else 10
                    rows.append(
                        {"concept_id": k, "model_id": model, "language": lang, "capability": cap,
                         "score_num": min(yes, valid), "score_den": valid}
                    )  # fmt: skip
    return pa.Table.from_pylist(rows + list(extra)), pa.Table.from_pylist(covered)


def stats_of(models: dict, bilingual=("en", "zh"), extra: tuple[dict, ...] = ()) -> ConceptStats:
    return stats_from_arrow(
        tables(models, extra)[0], CAPABILITIES, SCORE_SOURCES, bilingual_languages=bilingual
    )


def test_restrict_models_keeps_the_chosen_generators():
    """Guards `restrict_models`: the model ids and both statistics of the chosen generators."""
    stats = stats_of({m: (EVERY_PROMPT, ("c1",)) for m in ("r1", "r2", "r3")})
    got = restrict_models(stats, [2, 0])
    assert got.model_ids == ("r3", "r1")
    assert got.numerator.tolist() == stats.numerator[:, [2, 0]].tolist()
    assert got.denominator.tolist() == stats.denominator[:, [2, 0]].tolist()


def test_coverage_and_fully_evaluated_by_hand():
    """Guards `coverage` (each table value placed at its index in the statistics' own order of
    models, concepts and languages, not in sorted order or among the table's values only) and
    `fully_evaluated` (a prompt no generator was evaluated on is not part of the benchmark)."""
    stats = ConceptStats(
        concept_ids=("k2", "k0", "k1"),
        model_ids=("zeta", "alpha", "mid"),
        languages=("zh", "en"),
        capabilities=("c1",),
        capability_groups=("g1",),
        is_transcription=np.zeros(1, bool),
        numerator=np.zeros((3, 3, 2, 1)),
        denominator=np.zeros((3, 3, 2, 1)),
    )
    prompts = [("zeta", k, lang) for k in ("k0", "k2") for lang in ("en", "zh")]
    prompts.append(("alpha", "k0", "en"))
    table = pa.Table.from_pylist(
        [{"model_id": m, "concept_id": k, "language": lang} for m, k, lang in prompts]
    )
    got = coverage(table, stats)
    want = np.zeros((3, 3, 2), bool)
    for k in ("k0", "k2"):
        for lang in ("en", "zh"):
            want[0, ("k2", "k0", "k1").index(k), ("zh", "en").index(lang)] = True
    want[1, 1, 1] = True
    assert got.tolist() == want.tolist()
    # k1 is nobody's: zeta, with every other prompt, is fully evaluated
    assert fully_evaluated(got).tolist() == [True, False, False]


def test_planned_inclusion_by_hand():
    """Guards `planned_inclusion`: `stratified` gives each stratum's drawn share (drawn / members),
    `random` n / C, `irt` pi-ps over the sizes for the estimator asked (`greg` by default, `ht`
    differing here); each plan named, the pps ones in one integer stratum; an unknown strategy
    refused naming the strategies."""
    stats = stats_of({m: (EVERY_PROMPT, ("c1", "c2")) for m in ("r1", "r2", "r3")})
    planner = Planner(stats, (0, 1, 2))
    chosen = np.array([0, 3, 4])
    strata = planner.strata()
    plan = planned_inclusion("stratified", planner, chosen)
    assert plan.strategy == "stratified" and plan.stratum.tolist() == strata.tolist()
    for label in set(strata.tolist()):
        members = [c for c in range(8) if strata[c] == label]
        share = sum(c in chosen for c in members) / len(members)
        assert all(plan.inclusion[c] == share for c in members)
    assert len(set(strata.tolist())) > 1
    plan = planned_inclusion("random", planner, chosen)
    assert plan.strategy == "random" and plan.inclusion.tolist() == [3 / 8] * 8
    assert plan.stratum.dtype.kind == "i" and (plan.stratum == 0).all()
    items, num, den = planner.items(), planner.numerator, planner.denominator
    for estimator in ("greg", "ht"):
        want = pps_probabilities(irt_sizes(num, den, stats, items, estimator), 3)
        got = planned_inclusion("irt", planner, chosen, estimator)
        assert got.inclusion.tolist() == want.tolist()
    default = planned_inclusion("irt", planner, chosen).inclusion.tolist()
    assert default == planned_inclusion("irt", planner, chosen, "greg").inclusion.tolist()
    assert default != planned_inclusion("irt", planner, chosen, "ht").inclusion.tolist()
    with pytest.raises(ValueError, match=r"unknown strategy 'all'; expected one of \('random'"):
        planned_inclusion("all", planner, chosen)


# r1-r3 answer c1 and c2 on every prompt; p answers c1, c2 and c3 (c3 no reference has) on
# k0-k4 in English and k0-k2 in Chinese; q English only; z was evaluated but every answer invalid
WORLD = {
    "r1": (EVERY_PROMPT, ("c1", "c2")),
    "r2": (EVERY_PROMPT, ("c1", "c2")),
    "r3": (EVERY_PROMPT, ("c1", "c2")),
    "p": (
        [(k, "en") for k in CONCEPTS[:5]] + [(k, "zh") for k in CONCEPTS[:3]],
        ("c1", "c2", "c3"),
    ),
    "q": ([(k, "en") for k in CONCEPTS[2:6]], ("c1", "c2")),
}


@pytest.mark.parametrize("estimator", ["greg", "ht"])
def test_subset_estimates_hand_the_building_blocks_the_right_inputs(estimator):
    """Guards `subset_estimates`' wiring: each partial generator is estimated from the concepts it
    was evaluated on, on the plan `planned_inclusion` gives (default sizes), by the estimator
    asked, with the capabilities the references have (c3, which only p answers, stays out of
    the interval) and, for `greg`, the references' predictor; its rows per scope in points,
    an undefined scope (q has no Chinese) null rather than NaN."""
    stats_table, coverage_table = tables(WORLD)
    got = subset_estimates(
        stats_table,
        coverage_table,
        CAPABILITIES,
        SCORE_SOURCES,
        strategy="irt",
        estimator=estimator,
    ).to_pylist()
    stats = stats_of(WORLD)
    references = (
        stats.model_ids.index("r1"),
        stats.model_ids.index("r2"),
        stats.model_ids.index("r3"),
    )
    planner = Planner(stats, references)
    predictor = Predictor.from_planner(planner)
    available = np.array([[True, True, False], [True, True, False]])
    rows = {(r["model_id"], r["language_scope"]): r for r in got}
    assert len(got) == 6
    for model, drawn in (("p", [0, 1, 2, 3, 4]), ("q", [2, 3, 4, 5])):
        m = stats.model_ids.index(model)
        plan = planned_inclusion("irt", planner, np.array(drawn))
        num, den = stats.numerator[:, m], stats.denominator[:, m]
        est = estimate(estimator, num, den, plan, stats, predictor, available)
        for s, scope in enumerate(("en", "zh", "bilingual")):
            row = rows[model, scope]
            if np.isnan(est.total[s]):
                assert (row["hcq_total"], row["ci_lo"], row["ci_hi"], row["rank"]) == (None,) * 4
                continue
            assert row["hcq_total"] == pytest.approx(100 * est.total[s], rel=1e-12)
            assert row["ci_lo"] == pytest.approx(100 * est.ci_lo[s], rel=1e-12)
            assert row["ci_hi"] == pytest.approx(100 * est.ci_hi[s], rel=1e-12)
    assert rows["q", "zh"]["hcq_total"] is None and rows["p", "zh"]["hcq_total"] is not None
    # c3 out of the interval: with it the interval differs
    m = stats.model_ids.index("p")
    plan = planned_inclusion("irt", planner, np.arange(5))
    with_c3 = estimate(
        estimator, stats.numerator[:, m], stats.denominator[:, m], plan, stats, predictor
    )
    assert rows["p", "en"]["ci_hi"] != pytest.approx(100 * with_c3.ci_hi[0], rel=1e-9)


def test_subset_estimates_of_a_release_without_the_bilingual_pair():
    """Guards the bilingual pair handed to the statistics: with ("en", "fr") there is no
    bilingual scope, so p gets rows for en and zh only."""
    stats_table, coverage_table = tables(WORLD)
    got = subset_estimates(
        stats_table, coverage_table, CAPABILITIES, SCORE_SOURCES, estimator="ht",
        bilingual_languages=("en", "fr"),
    ).to_pylist()  # fmt: skip
    assert sorted((r["model_id"], r["language_scope"]) for r in got) == [
        ("p", "en"), ("p", "zh"), ("q", "en"), ("q", "zh"),
    ]  # fmt: skip


def test_subset_estimates_keep_the_mart_types_when_nothing_is_defined():
    """Guards the schema handed to Arrow: z's answers are all invalid, so every total and rank
    is null; the columns must still be the mart's (int64 ranks, double totals), not Arrow's
    null type."""
    world = {"r1": WORLD["r1"], "r2": WORLD["r2"], "z": ([("k0", "en"), ("k1", "zh")], ("c1",))}
    got = subset_estimates(*tables(world), CAPABILITIES, SCORE_SOURCES, estimator="ht")
    assert got.num_rows == 3 and got.schema == SUBSET_ESTIMATES_SCHEMA
    assert got.column("rank").null_count == 3


def test_validation_scope():
    """Guards `validation_scope`: bilingual where the pair is present, the only language of a
    one-language release, none for several languages without the pair."""
    both = stats_of({"r1": (EVERY_PROMPT, ("c1",))})
    assert validation_scope(both) == "bilingual"
    assert validation_scope(stats_of({"r1": (EVERY_PROMPT, ("c1",))}, ("en", "fr"))) is None
    english = stats_of({"r1": ([(k, "en") for k in CONCEPTS], ("c1",))})
    assert validation_scope(english) == "en"


def test_validation_cases_hand_each_plan_and_estimator_their_design():
    """Guards `validation_cases`: each generator held out in turn, planned from the others only
    (stratified: their strata; irt: `irt_sizes` for the estimator that reads the plan; random:
    equal sizes), estimated by that estimator from its own evidence on the plan (r1's one
    question of c3 counts as available), against its
    full-benchmark total in the scope; the budget, seed, generator and label recorded; the
    progress told of each generator held out."""
    world = {m: (EVERY_PROMPT, ("c1", "c2")) for m in ("r1", "r2", "r3")}
    stats = stats_of(world, extra=(ONE_QUESTION,))
    told = []
    got = validation_cases(stats, budgets=(0.5,), seeds=(4,), progress=told.append)
    assert told == ["held out r1", "held out r2", "held out r3"]
    assert len(got) == 3 * 3 * 2
    cases = {(c.model, c.strategy): c for c in got}
    for m in range(3):
        planner = Planner(stats, tuple(k for k in range(3) if k != m))
        predictor = Predictor.from_planner(planner)
        num, den = stats.numerator[:, m], stats.denominator[:, m]
        truth = bilingual_total(num.sum(axis=0), den.sum(axis=0))
        for strategy in STRATEGIES:
            for estimator in ("greg", "ht"):
                if strategy == "stratified":
                    design = planner.strata()
                elif strategy == "irt":
                    design = irt_sizes(
                        planner.numerator, planner.denominator, stats, planner.items(), estimator
                    )
                else:
                    design = np.ones(8)
                plan = make_plan(strategy, 0.5, 4, planner, design)
                est = estimate(estimator, num, den, plan, stats, predictor)
                label = strategy if estimator == "greg" else f"{strategy}-ht"
                case = cases[m, label]
                assert (case.budget_frac, case.seed, case.estimator) == (0.5, 4, estimator)
                assert case.truth == pytest.approx(truth, rel=1e-12)
                assert (case.estimate, case.ci_lo, case.ci_hi) == pytest.approx(
                    (est.total[2], est.ci_lo[2], est.ci_hi[2]), rel=1e-12
                )


def test_subset_validation_over_the_fully_evaluated_generators():
    """Guards `subset_validation`'s wiring: exactly three fully evaluated generators are enough
    (p and q, partial, are left out: three held out per case row), every budget x strategy x
    estimator for the seeds asked, rows as `summarise_validation` of those cases with the scope
    added, in the mart's schema; the bilingual pair handed on (("en", "fr") has no bilingual
    scope and two languages: nothing to report)."""
    stats_table, coverage_table = tables(WORLD)
    got = subset_validation(stats_table, coverage_table, CAPABILITIES, SCORE_SOURCES, seeds=2)
    stats = stats_of(WORLD)
    full = [stats.model_ids.index(m) for m in ("r1", "r2", "r3")]
    cases = validation_cases(restrict_models(stats, full), seeds=range(2))
    want = [row | {"language_scope": "bilingual"} for row in summarise_validation(cases)]
    assert got.schema.names == [
        "strategy", "budget_frac", "mae_points", "coverage_frac", "spearman", "kendall",
        "n_cases", "estimator", "language_scope",
    ]  # fmt: skip
    rows = got.to_pylist()
    assert len(rows) == len(VALIDATION_BUDGETS) * 6 == len(want)
    assert {r["n_cases"] for r in rows} == {6}
    for row, expected in zip(rows, want, strict=True):
        assert row == {
            k: pytest.approx(v) if isinstance(v, float) else v for k, v in expected.items()
        }
    none = subset_validation(
        stats_table, coverage_table, CAPABILITIES, SCORE_SOURCES, seeds=1,
        bilingual_languages=("en", "fr"),
    )  # fmt: skip
    assert none.num_rows == 0


def test_subset_validation_of_a_one_language_release_reports_its_language():
    """Guards the scope handed to `validation_cases`: an English-only release is validated and
    reported in `en` (there is no bilingual scope to report)."""
    world = {m: ([(k, "en") for k in CONCEPTS], ("c1", "c2")) for m in ("r1", "r2", "r3")}
    got = subset_validation(*tables(world), CAPABILITIES, SCORE_SOURCES, seeds=1).to_pylist()
    assert len(got) == len(VALIDATION_BUDGETS) * 6
    assert {r["language_scope"] for r in got} == {"en"}


def test_subset_estimates_count_a_capability_of_one_reference_question():
    """Guards the references' availability: c3, of which r1 has a single valid question, is a
    capability the references have, so p's c3 evidence enters its interval."""
    world = {m: WORLD[m] for m in ("r1", "r2", "r3", "p")}
    stats_table, coverage_table = tables(world, (ONE_QUESTION,))
    got = subset_estimates(stats_table, coverage_table, CAPABILITIES, SCORE_SOURCES, estimator="ht")
    stats = stats_of(world, extra=(ONE_QUESTION,))
    planner = Planner(stats, tuple(stats.model_ids.index(m) for m in ("r1", "r2", "r3")))
    m = stats.model_ids.index("p")
    plan = planned_inclusion("irt", planner, np.arange(5))
    est = estimate("ht", stats.numerator[:, m], stats.denominator[:, m], plan, stats, None)
    assert got.to_pylist()[0]["ci_hi"] == pytest.approx(100 * est.ci_hi[0], rel=1e-12)
