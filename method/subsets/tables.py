"""The subset tables of the warehouse (METHOD 16): fct_subset_estimates and agg_subset_validation.

The dbt Python models of `models/intermediate/subsets` pass DuckDB relations' Arrow tables here;
this module turns them into `ConceptStats` and coverage, finds the fully evaluated generators
(the references) and returns the Arrow table each model returns, so the models stay adapters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa

from method.bootstrap import (
    BILINGUAL,
    ConceptStats,
    columns_from_arrow,
    encode,
    point_totals,
    stats_from_arrow,
)
from method.scores import POINTS
from method.subsets.estimator import Predictor, estimate, rank_against
from method.subsets.plans import (
    DEFAULT_ESTIMATOR,
    ESTIMATORS,
    STRATEGIES,
    Plan,
    Planner,
    pps_probabilities,
)
from method.subsets.validation import summarise_validation, validation_cases


def restrict_models(stats: ConceptStats, models: Sequence[int]) -> ConceptStats:
    """The same statistics for a subset of the generators."""
    idx = list(models)
    return replace(
        stats,
        model_ids=tuple(stats.model_ids[i] for i in idx),
        numerator=stats.numerator[:, idx],
        denominator=stats.denominator[:, idx],
    )


def coverage(coverage_table, stats: ConceptStats) -> np.ndarray:
    """covered [M, C, L]: which (concept, language) prompts each generator was evaluated on
    (`int_prompt_coverage`: model_id, concept_id, language)."""
    cols = columns_from_arrow(coverage_table.select(["model_id", "concept_id", "language"]))
    _, m = encode(cols["model_id"], stats.model_ids)
    _, c = encode(cols["concept_id"], stats.concept_ids)
    _, lang = encode(cols["language"], stats.languages)
    covered = np.zeros((len(stats.model_ids), len(stats.concept_ids), len(stats.languages)), bool)
    covered[m, c, lang] = True
    return covered


def fully_evaluated(covered: np.ndarray) -> np.ndarray:
    """[M] bool: generators with evidence on every prompt of the benchmark (every concept in
    every language that any generator was evaluated on)."""
    benchmark = covered.any(axis=0)
    return (covered | ~benchmark[None]).all(axis=(1, 2))


SUBSET_ESTIMATES_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("language_scope", pa.string()),
        ("n_prompts", pa.int64()),
        ("hcq_total", pa.float64()),
        ("ci_lo", pa.float64()),
        ("ci_hi", pa.float64()),
        ("rank", pa.int64()),
        ("rank_lo", pa.int64()),
        ("rank_hi", pa.int64()),
        ("strategy", pa.string()),
        ("estimator", pa.string()),
    ]
)


def planned_inclusion(
    strategy: str, planner: Planner, chosen: np.ndarray, estimator: str = DEFAULT_ESTIMATOR
) -> Plan:
    """The plan behind a generator's evidence on the concepts `chosen`, as `strategy` draws it
    from the same fully evaluated generators: inclusion probabilities at the plan's size (for
    `stratified`, each stratum's drawn share, which is exact for its design)."""
    n_concepts = len(planner.stats.concept_ids)
    if strategy == "stratified":
        strata = planner.strata()
        inclusion = np.zeros(n_concepts)
        for label in np.unique(strata):
            members = strata == label
            inclusion[members] = np.isin(np.flatnonzero(members), chosen).sum() / members.sum()
        return Plan(strategy, chosen, inclusion, strata)
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
    inclusion = pps_probabilities(planner.sizes(strategy, estimator), len(chosen))
    return Plan(strategy, chosen, inclusion, np.zeros(n_concepts, int))


def subset_estimates(
    stats_table,
    coverage_table,
    capabilities_table,
    capability_scores_table,
    strategy: str = "irt",
    bilingual_languages: Sequence[str] = ("en", "zh"),
    estimator: str = "greg",
) -> pa.Table:
    """fct_subset_estimates, one row per generator evaluated on part of the benchmark x scope:
    the estimated full-benchmark HCQ total (points) with its 95% interval, the prompts used, and
    the rank (with the ranks at the interval's ends) among the fully evaluated generators, whose
    evidence is the item model's and the plan's reference. A concept counts as drawn when the
    generator was evaluated on any of its prompts (`coverage_table`, `int_prompt_coverage`);
    the other inputs as `method.bootstrap.stats_from_arrow`. `estimator`: `greg` (model-assisted,
    `greg_estimate`) or `ht` (design-only, `subset_estimate`)."""
    if estimator not in ESTIMATORS:
        raise ValueError(f"unknown estimator {estimator!r}; expected one of {ESTIMATORS}")
    stats = stats_from_arrow(
        stats_table, capabilities_table, capability_scores_table,
        bilingual_languages=bilingual_languages,
    )  # fmt: skip
    covered = coverage(coverage_table, stats)
    full = fully_evaluated(covered)
    rows: list[dict] = []
    partial = [m for m in range(len(stats.model_ids)) if not full[m] and covered[m].any()]
    if not partial or full.sum() < 2:
        return pa.Table.from_pylist(rows, schema=SUBSET_ESTIMATES_SCHEMA)
    references = tuple(np.flatnonzero(full))
    planner = Planner(stats, references)
    predictor = Predictor.from_planner(planner) if estimator == "greg" else None
    reference_totals = point_totals(restrict_models(stats, references))  # [K, scopes]
    available = stats.denominator[:, list(references)].sum(axis=(0, 1)) > 0
    for m in partial:
        chosen = np.flatnonzero(covered[m].any(axis=1))
        # the plan as `qct2i plan` drew it (default sizes), whichever estimator reads it
        plan = planned_inclusion(strategy, planner, chosen)
        est = estimate(
            estimator, stats.numerator[:, m], stats.denominator[:, m], plan, stats, predictor,
            available,
        )  # fmt: skip
        for s, scope in enumerate(stats.scopes):
            in_scope = [stats.languages.index(scope)] if scope in stats.languages else [
                stats.languages.index(lang) for lang in stats.bilingual_languages
            ]  # fmt: skip
            rank, rank_lo, rank_hi = rank_against(
                est.total[s], est.ci_lo[s], est.ci_hi[s], reference_totals[:, s]
            )
            defined = not np.isnan(est.total[s])
            rows.append(
                {
                    "model_id": stats.model_ids[m],
                    "language_scope": scope,
                    "n_prompts": int(covered[m][:, in_scope].sum()),
                    "hcq_total": POINTS * est.total[s] if defined else None,
                    "ci_lo": POINTS * est.ci_lo[s] if defined else None,
                    "ci_hi": POINTS * est.ci_hi[s] if defined else None,
                    "rank": rank,
                    "rank_lo": rank_lo,
                    "rank_hi": rank_hi,
                    "strategy": strategy,
                    "estimator": estimator,
                }
            )
    return pa.Table.from_pylist(rows, schema=SUBSET_ESTIMATES_SCHEMA)


SUBSET_VALIDATION_SCHEMA = pa.schema(
    [
        ("strategy", pa.string()),
        ("budget_frac", pa.float64()),
        ("mae_points", pa.float64()),
        ("coverage_frac", pa.float64()),
        ("spearman", pa.float64()),
        ("kendall", pa.float64()),
        ("n_cases", pa.int64()),
        ("estimator", pa.string()),
        ("language_scope", pa.string()),
    ]
)


def subset_validation(
    stats_table,
    coverage_table,
    capabilities_table,
    capability_scores_table,
    seeds: int,
    bilingual_languages: Sequence[str] = ("en", "zh"),
    workers: int = 1,
) -> pa.Table:
    """agg_subset_validation: leave-one-generator-out over the fully evaluated generators, every
    strategy x estimator x budget (`VALIDATION_BUDGETS`) x `seeds` seeds (`validation_cases`,
    `summarise_validation`, `workers` folds at once), in the bilingual scope where the evidence
    has one, else in its one language's (an English-only release such as TIFA160). Empty with
    fewer than 3 such generators, or with several languages but no bilingual pair."""
    stats = stats_from_arrow(
        stats_table, capabilities_table, capability_scores_table,
        bilingual_languages=bilingual_languages,
    )  # fmt: skip
    full = fully_evaluated(coverage(coverage_table, stats))
    scope = validation_scope(stats)
    if full.sum() < 3 or scope is None:
        return pa.Table.from_pylist([], schema=SUBSET_VALIDATION_SCHEMA)
    cases = validation_cases(
        restrict_models(stats, np.flatnonzero(full)), seeds=range(seeds), scope=scope,
        workers=workers,
    )  # fmt: skip
    rows = [row | {"language_scope": scope} for row in summarise_validation(cases)]
    return pa.Table.from_pylist(rows, schema=SUBSET_VALIDATION_SCHEMA)


def validation_scope(stats: ConceptStats) -> str | None:
    """The scope the validation reports: bilingual where it exists, else the only language."""
    if BILINGUAL in stats.scopes:
        return BILINGUAL
    return stats.languages[0] if len(stats.languages) == 1 else None
