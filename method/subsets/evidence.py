"""The evidence arrays every part of the subset method reads (METHOD 16): Eq. 4's weights per
scope, the logit scale of the item model, and full-benchmark capability scores (Eq. 2 / Eq. 3).

The evidence is `method.bootstrap.ConceptStats`, numerator / denominator per concept x model x
language x capability; these helpers turn it into what the item model, the plans and the
estimators share, so each of them has one definition.
"""

from __future__ import annotations

import numpy as np

from method.bootstrap import BILINGUAL, ConceptStats
from method.hcq import hcq_weights
from method.scores import capability_score

# Abilities are logits of scores clipped away from 0 and 1 (a generator perfect on a capability).
_CLIP = 1e-3


def scope_weights(available: np.ndarray, stats: ConceptStats) -> np.ndarray:
    """w [scopes, L, T]: the weight Eq. 4 gives each (language, capability) score in each scope's
    total, from the capabilities `available` [L, T] (the bilingual scope halves both languages')."""
    per_language = hcq_weights(available, stats.capability_groups)  # [L, T]
    weights = np.zeros((len(stats.scopes), *available.shape))
    for s, scope in enumerate(stats.scopes):
        if scope == BILINGUAL:
            for lang in stats.bilingual_languages:
                li = stats.languages.index(lang)
                weights[s, li] = 0.5 * per_language[li]
        else:
            li = stats.languages.index(scope)
            weights[s, li] = per_language[li]
    return weights


def design_weights(available: np.ndarray, stats: ConceptStats) -> np.ndarray:
    """w [L, T] the plans optimise for: the bilingual scope's, or the mean of the scopes' where
    the evidence has no bilingual pair."""
    weights = scope_weights(available, stats)
    if BILINGUAL in stats.scopes:
        return weights[stats.scopes.index(BILINGUAL)]
    return weights.mean(axis=0)


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), _CLIP, 1 - _CLIP)
    return np.log(p / (1 - p))


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def full_scores(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Scores [K, L, T] (Eq. 2 / Eq. 3, `capability_score`) from per-concept statistics
    [C, K, L, T]; NaN where there is no evidence."""
    return capability_score(np.sum(numerator, axis=0), np.sum(denominator, axis=0))
