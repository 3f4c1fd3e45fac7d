"""Where each generator fails (issue 24): per generator x language scope x capability, its
capability score (Eq. 2; Eq. 3 for text) beside the field's mean, the difference, and the
difference's 95% paired concept-bootstrap interval (METHOD 11's resampling).

Definitions (the method is silent; written down in the mart's yml and docs/method.md):
- The field of a generator is every *other* generator with a score on the capability in the
  scope; its mean is their unweighted mean score (each generator counts once, however much
  evidence it has). Leaving the generator out makes "below the field" mean "below the others":
  with the generator in, two generators would each sit half their gap from a mean they share.
- deficit = score - field mean, in points; negative means below the field.
- Scopes: each language and `pooled` (both languages' evidence summed, as fct_capability_scores).
- The interval: the same paired concept bootstrap as the rank intervals (one weights vector per
  draw for every generator and both languages, `method.bootstrap.bootstrap_sums`), scores and the
  field mean recomputed per draw; linear-interpolation percentiles 2.5 and 97.5 over the draws in
  which the deficit is defined.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from method.bootstrap import ConceptStats, bootstrap_sums, percentile_interval, stats_from_arrow
from method.scores import POINTS, capability_score

POOLED = "pooled"

CAPABILITY_DEFICITS_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("language_scope", pa.string()),
        ("capability", pa.string()),
        ("score", pa.float64()),
        ("field_mean", pa.float64()),
        ("n_field_models", pa.int64()),
        ("deficit", pa.float64()),
        ("deficit_ci_lo", pa.float64()),
        ("deficit_ci_hi", pa.float64()),
        ("n_draws", pa.int64()),
    ]
)


def scope_scores(numerator: np.ndarray, denominator: np.ndarray, stats: ConceptStats) -> np.ndarray:
    """Capability scores [..., M, languages + pooled, T] (fractions) from summed statistics
    [..., M, L, T]: each language's, then the pooled scope's from the languages' summed sums."""
    num = np.concatenate([numerator, numerator.sum(axis=-2, keepdims=True)], axis=-2)
    den = np.concatenate([denominator, denominator.sum(axis=-2, keepdims=True)], axis=-2)
    return capability_score(num, den, one_minus_distance=stats.is_transcription)


def field_means(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean score of the other generators, how many there are), both [..., M, S, T], from
    scores [..., M, S, T]; the mean is NaN where no other generator has a score."""
    defined = ~np.isnan(scores)
    own = np.where(defined, scores, 0.0)
    others = defined.sum(axis=-3, keepdims=True) - defined
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = (own.sum(axis=-3, keepdims=True) - own) / others
    return np.where(others > 0, mean, np.nan), others


def deficits(scores: np.ndarray) -> np.ndarray:
    """score - the field's mean per generator, [..., M, S, T]; NaN where either is undefined."""
    return scores - field_means(scores)[0]


def capability_deficits(
    stats_table,
    capabilities_table,
    capability_scores_table,
    *,
    draws: int,
    seed: int,
    bilingual_languages: Sequence[str] = ("en", "zh"),
) -> pa.Table:
    """int_capability_deficits: one row per generator x scope x capability with a score, in
    points, with the deficit's bootstrap interval over `draws` replicates (seed `seed`). Inputs
    as `method.bootstrap.stats_from_arrow`."""
    stats = stats_from_arrow(
        stats_table,
        capabilities_table,
        capability_scores_table,
        bilingual_languages=bilingual_languages,
    )
    observed = scope_scores(stats.numerator.sum(axis=0), stats.denominator.sum(axis=0), stats)
    field, n_field = field_means(observed)
    replicates = np.concatenate(
        [deficits(scope_scores(num, den, stats)) for num, den in bootstrap_sums(stats, draws, seed)]
    )  # [draws, M, S, T]
    flat = replicates.reshape(len(replicates), -1)
    lo, hi = (end.reshape(observed.shape) for end in percentile_interval(flat))
    n_draws = (~np.isnan(replicates)).sum(axis=0)
    scopes = (*stats.languages, POOLED)
    rows = []
    for m, s, t in zip(*np.nonzero(~np.isnan(observed)), strict=True):
        has_field = bool(n_field[m, s, t])
        rows.append(
            {
                "model_id": stats.model_ids[m],
                "language_scope": scopes[s],
                "capability": stats.capabilities[t],
                "score": POINTS * observed[m, s, t],
                "field_mean": POINTS * field[m, s, t] if has_field else None,
                "n_field_models": int(n_field[m, s, t]),
                "deficit": POINTS * (observed[m, s, t] - field[m, s, t]) if has_field else None,
                "deficit_ci_lo": _points(lo[m, s, t]),
                "deficit_ci_hi": _points(hi[m, s, t]),
                "n_draws": int(n_draws[m, s, t]),
            }
        )
    return pa.Table.from_pylist(rows, schema=CAPABILITY_DEFICITS_SCHEMA)


def _points(fraction: float) -> float | None:
    return None if np.isnan(fraction) else POINTS * float(fraction)
