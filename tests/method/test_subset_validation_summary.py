"""`method.subsets.summarise_validation` (agg_subset_validation, METHOD 16) on hand cases: the
interval's closed ends, the groups kept apart, the rank correlations only over seeds with more
than two generators; holes `make mutation` found (issue 36). Expected values by hand."""

from __future__ import annotations

import pytest

from method.subsets.validation import ValidationCase, summarise_validation


def case(strategy, budget, seed, model, truth, estimate, lo, hi, estimator="greg"):
    return ValidationCase(strategy, budget, seed, model, truth, estimate, lo, hi, estimator)


CASES = [
    # plan s at 10 %: seed 0 in the true order; the first truth on its interval's lower end,
    # the second on its upper end (both covered), the third outside
    case("s", 0.1, 0, 0, 0.5, 0.52, 0.5, 0.6),
    case("s", 0.1, 0, 1, 0.6, 0.58, 0.55, 0.6),
    case("s", 0.1, 0, 2, 0.7, 0.75, 0.71, 0.8),
    # seed 1: the first two swapped: ranks (2, 1, 3) against (1, 2, 3): rho 1 - 6 * 2 / 24 = 0.5,
    # tau (2 concordant - 1 discordant) / 3
    case("s", 0.1, 1, 0, 0.5, 0.6, 0.0, 1.0),
    case("s", 0.1, 1, 1, 0.6, 0.5, 0.0, 1.0),
    case("s", 0.1, 1, 2, 0.7, 0.7, 0.0, 1.0),
    # seed 2: two generators only, no correlation
    case("s", 0.1, 2, 0, 0.5, 0.55, 0.4, 0.7),
    case("s", 0.1, 2, 1, 0.6, 0.65, 0.4, 0.7),
    # the same plan at 20 %, one case; the design-only baseline, one case
    case("s", 0.2, 0, 0, 0.5, 0.5, 0.4, 0.6),
    case("s-ht", 0.1, 0, 0, 0.5, 0.6, 0.55, 0.65, estimator="ht"),
]


def test_summarise_validation_by_hand():
    """Guards agg_subset_validation per plan x budget: s at 10 %: errors .02, .02, .05, .1, .1,
    0, .05, .05 -> mean 4.875 points; 7 of 8 intervals hold the truth (closed at both ends);
    Spearman (1 + 0.5) / 2 and Kendall (1 + 1/3) / 2 over seeds 0 and 1 (seed 2 has two
    generators); s at 20 % and s-ht apart, each one case: no correlation (None), the
    estimator named from their own cases."""
    rows = summarise_validation(CASES)
    assert rows == [
        {
            "strategy": "s",
            "estimator": "greg",
            "budget_frac": 0.1,
            "mae_points": pytest.approx(4.875),
            "coverage_frac": 0.875,
            "spearman": pytest.approx(0.75),
            "kendall": pytest.approx(2 / 3),
            "n_cases": 8,
        },
        {
            "strategy": "s",
            "estimator": "greg",
            "budget_frac": 0.2,
            "mae_points": 0.0,
            "coverage_frac": 1.0,
            "spearman": None,
            "kendall": None,
            "n_cases": 1,
        },
        {
            "strategy": "s-ht",
            "estimator": "ht",
            "budget_frac": 0.1,
            "mae_points": pytest.approx(10.0),
            "coverage_frac": 0.0,
            "spearman": None,
            "kendall": None,
            "n_cases": 1,
        },
    ]
