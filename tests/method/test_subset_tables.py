"""`method.subsets.tables` (fct_subset_estimates, agg_subset_validation, METHOD 16) on a hand
world: only the dbt marts reached these adapters until `make mutation` showed 298 of their 304
mutants without a unit test (issue 36). Expected values by hand in the docstrings; the estimate
of a random plan read by the design-only (`ht`) estimator is the plain HCQ of the drawn prompts
(`test_random_plan_with_ht_is_the_plain_hcq_of_the_drawn_prompts`)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from method.subsets.tables import subset_estimates, subset_validation

CAPABILITIES = pa.table(
    {"capability": ["c"], "group_key": ["g"], "group_order": [1], "capability_order": [1]}
)
SCORE_SOURCES = pa.table({"capability": ["c"], "score_source": ["judgment"]})
CONCEPTS = [f"k{i}" for i in range(6)]
# Valid yes of 10 per prompt: r1 9 and r2 1 everywhere (fully evaluated); p, evaluated on k0-k2
# in both languages and on k3 in English only, 6 in English and 4 in Chinese.
YES = {"r1": {"en": 9, "zh": 9}, "r2": {"en": 1, "zh": 1}, "p": {"en": 6, "zh": 4}}
EVALUATED = {
    "r1": [(k, lang) for k in CONCEPTS for lang in ("en", "zh")],
    "r2": [(k, lang) for k in CONCEPTS for lang in ("en", "zh")],
    "p": [(k, lang) for k in CONCEPTS[:3] for lang in ("en", "zh")] + [("k3", "en")],
}


def tables(models=("r1", "r2", "p")):
    """(int_prompt_sufficient_stats, int_prompt_coverage) of `models`."""
    prompts = [(m, k, lang) for m in models for k, lang in EVALUATED[m]]
    stats = pa.Table.from_pylist(
        [
            {
                "concept_id": k,
                "model_id": m,
                "language": lang,
                "capability": "c",
                "score_num": YES[m][lang],
                "score_den": 10,
            }
            for m, k, lang in prompts
        ]
    )
    coverage = pa.Table.from_pylist(
        [{"model_id": m, "concept_id": k, "language": lang} for m, k, lang in prompts]
    )
    return stats, coverage


@pytest.mark.parametrize("strategy", ["random", "stratified", "irt"])
def test_subset_estimates_of_each_plan_by_hand(strategy):
    """Guards fct_subset_estimates' rows for the one partially evaluated generator p, per scope:
    the prompts it was evaluated on in the scope (en 4, zh 3, bilingual 7), its estimate (the
    plain HCQ of its prompts: 60, 40 and their mean 50 points: every drawn concept scores the
    same, so the design-only ratio is that score whatever inclusion probabilities each plan
    gives, and the interval is that point), its rank among the fully evaluated r1 (90) and r2
    (10) at the estimate and both interval ends (2), and the plan and estimator named. The fully
    evaluated generators get no row."""
    stats, coverage = tables()
    got = subset_estimates(
        stats, coverage, CAPABILITIES, SCORE_SOURCES, strategy=strategy, estimator="ht"
    ).to_pylist()
    want = [("en", 4, 60.0), ("zh", 3, 40.0), ("bilingual", 7, 50.0)]
    assert len(got) == len(want)
    for row, (scope, n_prompts, total) in zip(got, want, strict=True):
        assert row == {
            "model_id": "p",
            "language_scope": scope,
            "n_prompts": n_prompts,
            "hcq_total": pytest.approx(total),
            "ci_lo": pytest.approx(total),
            "ci_hi": pytest.approx(total),
            "rank": 2,
            "rank_lo": 2,
            "rank_hi": 2,
            "strategy": strategy,
            "estimator": "ht",
        }


def test_subset_estimates_default_to_the_irt_plan_and_the_model_assisted_estimator():
    """Guards the defaults `qct2i plan` and the mart use: the `irt` plan read by `greg`, for the
    same prompts per scope, its estimate inside its interval."""
    got = subset_estimates(*tables(), CAPABILITIES, SCORE_SOURCES).to_pylist()
    assert [(r["strategy"], r["estimator"]) for r in got] == [("irt", "greg")] * 3
    assert [r["n_prompts"] for r in got] == [4, 3, 7]
    assert all(r["ci_lo"] <= r["hcq_total"] <= r["ci_hi"] for r in got)


def test_subset_estimates_need_a_partial_generator_and_two_references():
    """Guards the empty table (with the mart's columns) when no generator is partial, or when
    fewer than two generators are fully evaluated to serve as references; and the refusal of an
    unknown estimator, naming the known ones."""
    names = [
        "model_id",
        "language_scope",
        "n_prompts",
        "hcq_total",
        "ci_lo",
        "ci_hi",
        "rank",
        "rank_lo",
        "rank_hi",
        "strategy",
        "estimator",
    ]
    for models in (("r1", "r2"), ("r1", "p")):
        got = subset_estimates(*tables(models), CAPABILITIES, SCORE_SOURCES)
        assert got.num_rows == 0 and got.column_names == names
        assert got.schema.field("n_prompts").type == pa.int64()
    with pytest.raises(ValueError) as refused:
        subset_estimates(*tables(), CAPABILITIES, SCORE_SOURCES, estimator="bogus")
    assert str(refused.value) == "unknown estimator 'bogus'; expected one of ('greg', 'ht')"


def test_subset_validation_needs_three_fully_evaluated_generators():
    """Guards agg_subset_validation's empty table (with its columns) below three fully evaluated
    generators: leaving one out must leave two references."""
    got = subset_validation(*tables(), CAPABILITIES, SCORE_SOURCES, seeds=1)
    assert got.num_rows == 0
    assert got.column_names == [
        "strategy",
        "budget_frac",
        "mae_points",
        "coverage_frac",
        "spearman",
        "kendall",
        "n_cases",
        "estimator",
        "language_scope",
    ]
