"""Score formulas that SQL and numpy both need: the numpy twins of `macros/capability_score.sql`
and `macros/bilingual_mean.sql`; tests/marts/test_formula_parity.py holds each pair equal.

The sufficient statistics have one encoding, emitted once by `int_prompt_sufficient_stats` as
`score_num` / `score_den`: Eq. 2 valid yes / valid questions; Eq. 3 (the transcription capability)
L - D / L, UTF-16 target length minus edit distance over target length. Either way the score of any
set of records is a ratio of the sums of its rows.
"""

from __future__ import annotations

import numpy as np

# Scores are fractions in the library and points (0-100) in the marts: fraction * POINTS.
POINTS = 100.0


def capability_score(num, den, one_minus_distance=False) -> np.ndarray:
    """Eq. 2 / Eq. 3 from summed `score_num` / `score_den`: max(0, num / den), NaN where den = 0.

    `one_minus_distance` (bool, broadcasts): evaluate Eq. 3 as METHOD 3 writes it, 1 - D / L with
    D = den - num, instead of (L - D) / L. The two differ in the last bit only; the leaderboard and
    the reliability bootstrap use the former, the router (whose sums can be means over draws, where
    den - num is not D exactly) the latter, and each keeps its rounding so marts stay bit-identical.
    """
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(one_minus_distance, 1.0 - (den - num) / den, num / den)
    return np.where(den > 0, np.maximum(0.0, ratio), np.nan)


def bilingual_mean(first, second) -> np.ndarray:
    """The `bilingual` scope (METHOD 4): the fixed 50/50 mean of two languages' figures, NaN
    unless both are defined; never re-weighted by how much evidence each language has."""
    return (np.asarray(first, dtype=float) + np.asarray(second, dtype=float)) / 2
