"""Leave-one-generator-out validation of the subset plans and estimators (METHOD 16).

Each fully evaluated generator is held out in turn and estimated from its evidence on plans
drawn from the others' evidence only; the summary (agg_subset_validation) is the error, interval
coverage and rank agreement per strategy x budget, so a plan's claims are checked on the
warehouse's own generators.
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from method.bootstrap import BILINGUAL, ConceptStats, scope_totals
from method.rank_correlation import kendall_tau_b, spearman_rho
from method.scores import POINTS
from method.subsets.estimator import Predictor, estimate
from method.subsets.items import irt_sizes_by_estimator
from method.subsets.plans import ESTIMATORS, STRATEGIES, Planner, make_plan

VALIDATION_BUDGETS = (0.02, 0.05, 0.10, 0.20)


@dataclass(frozen=True)
class ValidationCase:
    strategy: str
    budget_frac: float
    seed: int
    model: int
    truth: float  # full-benchmark bilingual total (fraction)
    estimate: float
    ci_lo: float
    ci_hi: float
    estimator: str = "greg"


def strategy_label(strategy: str, estimator: str) -> str:
    """agg_subset_validation's `strategy`: the plan's name for the model-assisted (`greg`)
    estimator, `<plan>-ht` for the design-only (Hajek) baseline on the same plans."""
    return strategy if estimator == "greg" else f"{strategy}-{estimator}"


def validation_cases(
    stats: ConceptStats,
    budgets: Sequence[float] = VALIDATION_BUDGETS,
    strategies: Sequence[str] = STRATEGIES,
    seeds: Sequence[int] = range(5),
    scope: str = BILINGUAL,
    progress: Callable[[str], None] | None = None,
    estimators: Sequence[str] = ESTIMATORS,
    workers: int = 1,
) -> list[ValidationCase]:
    """Hold each generator out in turn: plan from the others' evidence, estimate the held-out
    generator from its evidence on the plan's concepts only, compare with its full total. Every
    estimator sees the same plans, so their errors differ by the estimator alone.

    `workers` > 1 computes that many folds at once in threads: numpy releases the GIL in its
    array loops, so two threads take about half the time on idle cores (12.8 to 6.1 s at paper
    scale), and each fold's figures are computed as alone, so the cases are the same, bit for
    bit, in the same order. Each fold in flight holds its references' evidence and its fits
    (the second added 1.1 GB to a 10x build's peak)."""
    si = stats.scopes.index(scope)
    truth = scope_totals(stats.numerator.sum(axis=0), stats.denominator.sum(axis=0), stats)[:, si]
    available = stats.denominator.sum(axis=(0, 1)) > 0
    fold = functools.partial(
        _held_out_cases, stats, si, truth, available, budgets, strategies, seeds, estimators
    )
    folds = range(len(stats.model_ids))
    cases = []
    # A fold silences the RuntimeWarnings it expects (`fit_items`, `Predictor`) with
    # `warnings.catch_warnings`, which swaps the process's one filter list and is not
    # thread-safe: folds entering and leaving it at once can leave one fold's filter in place
    # after both end (or let an expected warning through). The outer context puts the list
    # back as it was once every fold has ended, so nothing is left behind for the process.
    with warnings.catch_warnings(), ThreadPoolExecutor(max(1, workers)) as pool:
        for m, held_out in zip(folds, pool.map(fold, folds), strict=True):
            cases += held_out
            if progress:
                progress(f"held out {stats.model_ids[m]}")
    return cases


def _held_out_cases(
    stats: ConceptStats,
    si: int,
    truth: np.ndarray,
    available: np.ndarray,
    budgets: Sequence[float],
    strategies: Sequence[str],
    seeds: Sequence[int],
    estimators: Sequence[str],
    m: int,
) -> list[ValidationCase]:
    """One fold of `validation_cases`: generator `m` held out; `si` the scope's index and
    `truth` [M] every generator's full-benchmark total in it; `available` [L, T] the
    capabilities the full benchmark scores."""
    planner = Planner(stats, tuple(k for k in range(len(stats.model_ids)) if k != m))
    items = planner.items()
    predictor = Predictor.from_planner(planner, items) if "greg" in estimators else None
    irt = (
        irt_sizes_by_estimator(planner.numerator, planner.denominator, stats, items, estimators)
        if "irt" in strategies else {}
    )  # fmt: skip
    cases = []
    for strategy, estimator in itertools.product(strategies, estimators):
        design = (
            planner.strata() if strategy == "stratified"
            else irt[estimator] if strategy == "irt" else planner.sizes(strategy)
        )  # fmt: skip
        for budget, seed in ((b, s) for b in budgets for s in seeds):
            plan = make_plan(strategy, budget, seed, planner, design)
            est = estimate(
                estimator, stats.numerator[:, m], stats.denominator[:, m], plan, stats,
                predictor, available,
            )  # fmt: skip
            cases.append(
                ValidationCase(
                    strategy_label(strategy, estimator), budget, seed, m, truth[m],
                    est.total[si], est.ci_lo[si], est.ci_hi[si], estimator,
                )
            )  # fmt: skip
    return cases


def summarise_validation(cases: Sequence[ValidationCase]) -> list[dict]:
    """agg_subset_validation rows per strategy x budget: mean absolute error (points), interval
    coverage over (generator, seed) cases, and the mean over seeds of the Spearman and Kendall
    correlation between the estimated and the full-benchmark order of all generators."""
    rows = []
    keys = dict.fromkeys((c.strategy, c.budget_frac) for c in cases)
    for strategy, budget in keys:
        mine = [c for c in cases if c.strategy == strategy and c.budget_frac == budget]
        errors = np.array([abs(c.estimate - c.truth) for c in mine])
        covered = np.array([c.ci_lo <= c.truth <= c.ci_hi for c in mine])
        rho, tau = [], []
        for seed in sorted({c.seed for c in mine}):
            one = [c for c in mine if c.seed == seed]
            est, full = [c.estimate for c in one], [c.truth for c in one]
            if len(one) > 2:
                rho.append(spearman_rho(est, full))
                tau.append(kendall_tau_b(est, full))
        rows.append(
            {
                "strategy": strategy,
                "estimator": mine[0].estimator,
                "budget_frac": budget,
                "mae_points": POINTS * float(np.mean(errors)),
                "coverage_frac": float(np.mean(covered)),
                "spearman": float(np.mean(rho)) if rho else None,
                "kendall": float(np.mean(tau)) if tau else None,
                "n_cases": len(mine),
            }
        )
    return rows
