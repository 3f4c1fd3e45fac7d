"""Spearman's rho and Kendall's tau-b of two samples, the same floats as scipy.stats' spearmanr
and kendalltau (tests/method/test_rank_correlation.py compares them bit for bit).

Written out because scipy.stats takes about 0.4 s to import, and every dbt build is a new
process whose fct_masking_effect (METHOD 6) and agg_subset_validation (METHOD 16) need only
these two statistics of a dozen generators; the formulas are scipy's, step for step, so the
marts keep their fingerprints.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def average_ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing the mean of their ranks (scipy's rankdata, method='average')."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        ranks[order[i : j + 1]] = 0.5 * ((i + 1) + (j + 1))  # halves: exact in a float
        i = j + 1
    return ranks


def _paired(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"two samples of one length needed, not {x.shape} and {y.shape}")
    return x, y


def spearman_rho(a: Sequence[float], b: Sequence[float]) -> float:
    """Pearson's correlation of the average ranks; NaN for fewer than 2 pairs, a constant sample
    or a NaN value (scipy: nan_policy='propagate')."""
    x, y = _paired(a, b)
    if len(x) <= 1 or (x == x[0]).all() or (y == y[0]).all():
        return float("nan")
    if np.isnan(x).any() or np.isnan(y).any():
        return float("nan")
    ranked = np.column_stack((average_ranks(x), average_ranks(y)))
    return float(np.corrcoef(ranked, rowvar=False)[1, 0])


def kendall_tau_b(a: Sequence[float], b: Sequence[float]) -> float:
    """(concordant - discordant) / sqrt((n0 - ties in a) (n0 - ties in b)), n0 = n(n - 1)/2
    pairs; NaN for no pairs, a constant sample or a NaN value. The counts by pairs (O(n^2):
    the samples here are a generator list), then scipy's float steps."""
    x, y = _paired(a, b)
    if len(x) == 0 or np.isnan(x).any() or np.isnan(y).any():
        return float("nan")
    upper = np.triu_indices(len(x), k=1)
    dx = np.sign(x[:, None] - x[None, :])[upper]
    dy = np.sign(y[:, None] - y[None, :])[upper]
    total = len(dx)
    x_ties, y_ties = int((dx == 0).sum()), int((dy == 0).sum())
    if x_ties == total or y_ties == total:
        return float("nan")
    concordant_minus_discordant = int((dx * dy).sum())
    tau = concordant_minus_discordant / np.sqrt(total - x_ties) / np.sqrt(total - y_ties)
    return float(np.minimum(1.0, max(-1.0, tau)))
