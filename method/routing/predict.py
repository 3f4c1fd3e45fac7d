"""Q-Profile's prediction and choice (METHOD 12): HCQ restricted to a request's capabilities.

Q-Profile predicts generator m's quality on request r as HCQ (Eq. 4) over m's reference-fold
capability scores in r's language, restricted to the capabilities r's questions carry: mean over
the active capabilities within each reporting group, then over the groups present; a capability
without a reference score drops out. No learned parameters. Q-Profile-Q takes the best
prediction, Q-Profile-C the cheapest generator within `eps` of it; ties go to the cheaper
generator, then to the model id that sorts first. The out-of-fold evaluation and `qct2i route`
both choose through `choose` here.

The restricted HCQ (`hcq_frac`) calls `method.hcq`, the numpy form of `macros/hcq.sql`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from method.hcq import hcq_total
from method.taxonomy import Taxonomy

# Predictions equal up to float rounding count as tied (then cost, then model id decide).
TIE_TOLERANCE = 1e-12


def hcq_frac(scores: np.ndarray, active: np.ndarray, taxonomy: Taxonomy) -> np.ndarray:
    """HCQ (Eq. 4, `method.hcq`) over the last axis, restricted to `active` capabilities.

    `scores` (..., T): capability scores as fractions, NaN where there is none; `active` broadcasts
    to it. An inactive capability is treated as having no score, so it drops out as a missing one
    does: mean over the used capabilities within each group, then over the groups that have one;
    NaN where no group has one.
    """
    return hcq_total(np.where(active, scores, np.nan), taxonomy.capability_groups)


def predict_quality(profile: np.ndarray, active: np.ndarray, taxonomy: Taxonomy) -> np.ndarray:
    """Q-Profile: (P, M) predicted quality of M generators (profile (M, T)) on P requests
    (active (P, T))."""
    return hcq_frac(profile[None, :, :], active[:, None, :], taxonomy)


def choose(predicted: np.ndarray, cost_rank: np.ndarray, eps: float) -> np.ndarray:
    """(P,) index of the chosen generator per request (row of `predicted`, (P, M)).

    Candidates: predictions within `eps` of the row's best (NaN = no prediction, never a
    candidate unless the whole row is NaN); among them the one first in `cost_rank` order
    (`cost_rank[m]` = position of m sorted by cost, then model id). eps = 0 is Q-Profile-Q.
    """
    filled = np.where(np.isnan(predicted), -np.inf, predicted)
    best = filled.max(axis=1, keepdims=True)
    candidate = filled >= best - eps - TIE_TOLERANCE
    ranked = np.where(candidate, cost_rank[None, :], np.iinfo(np.int64).max)
    return ranked.argmin(axis=1)


def cost_ranks(cost: np.ndarray, models: Sequence[str]) -> np.ndarray:
    """Each generator's position when sorted by cost, then model id (the tie rule)."""
    order = sorted(range(len(models)), key=lambda m: (cost[m], models[m]))
    ranks = np.empty(len(models), dtype=np.int64)
    ranks[order] = np.arange(len(models))
    return ranks
