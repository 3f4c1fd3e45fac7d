"""Judges as measured instruments: agreement between judges (METHOD 14) and with human ratings
(METHOD 15).

- Cohen's kappa for two binary raters from the 2x2 table of their answers on shared items:
  kappa = (p_o - p_e) / (1 - p_e), p_o the share of items answered alike, p_e = p_a p_b +
  (1 - p_a)(1 - p_b) the agreement expected from each judge's own yes-rate. Undefined (NaN) when
  p_e = 1: both judges gave one and the same answer to every item.
- Spearman's rho (Pearson correlation of average ranks) and Kendall's tau-b, both with ties.
- Intervals: 95% percentile bootstrap over concepts (a concept's prompts in every language, and
  every image of them, enter or leave a draw together; a concept is one prompt where the bundle
  has one language), with `method.bootstrap`'s keyed streams (`rng_for`) and resampler
  (`resampling_counts`): one stream per mart, its draws shared by every judge pair and capability
  (or every judge), so the intervals are paired as the ranking bootstrap's are (METHOD 11).
  A draw is a vector of concept counts w, so every statistic is computed
  on the weighted sample, never by copying rows: the 2x2 tables are `w @ S` (S the per-concept
  tables), and the correlations are the ones of the sample in which image i appears w_i times
  (ranks and concordance counts from pairwise comparison matrices; memory grows with the square
  of the images per judge, fine up to a few thousand rated images).

Conventions (METHOD is silent):
- Pairs of judges are unordered, `judge_a` < `judge_b`.
- A draw in which a statistic is undefined (kappa with p_e = 1, a correlation of constant
  scores) is left out of that statistic's interval; `n_draws` says how many counted.
- Below the minimum of shared items (dbt var) kappa and its interval are NULL with a reason;
  raw agreement is still reported. Correlations need 3 images, the ranking correlation 2
  generators (with two it is +1 or -1: the same order or not).
- `ranking_matches`: the generators' competition ranks by the judge's mean image score equal
  their ranks by the mean human score (ties included).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import product

import numpy as np
import pyarrow as pa

from method.bootstrap import (
    DRAW_CHUNK,
    competition_ranks,
    encode,
    percentile_interval,
    resampling_counts,
    rng_for,
)

ALL_CAPABILITIES = "__all__"
MIN_IMAGES = 3
MIN_MODELS = 2


# -- Cohen's kappa (METHOD 14) -----------------------------------------------------------------


def kappa_from_table(both_yes, a_only, b_only, both_no) -> tuple[np.ndarray, np.ndarray]:
    """(raw agreement p_o, Cohen's kappa) from the 2x2 counts of two binary raters (arrays
    broadcast; counts may be bootstrap-weighted). NaN where there is no item, kappa NaN where
    p_e = 1."""
    both_yes, a_only, b_only, both_no = (
        np.asarray(x, dtype=float) for x in (both_yes, a_only, b_only, both_no)
    )
    n = both_yes + a_only + b_only + both_no
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = (both_yes + both_no) / n
        yes_a, yes_b = (both_yes + a_only) / n, (both_yes + b_only) / n
        expected = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
        kappa = np.where(expected < 1, (observed - expected) / (1 - expected), np.nan)
    return observed, kappa


def cohen_kappa(a, b) -> float:
    """Kappa of two equal-length 0/1 answer vectors (the items both raters answered)."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    table = ((a & b).sum(), (a & ~b).sum(), (~a & b).sum(), (~a & ~b).sum())
    return float(kappa_from_table(*table)[1])


# -- rank correlations with ties, on weighted samples (METHOD 15) -------------------------------


def weighted_spearman(x, y, weights) -> np.ndarray:
    """Spearman's rho [draws] of the samples in which point i appears weights[d, i] times:
    Pearson's r of the average ranks (ties share their mean rank). NaN where a variable is
    constant."""
    x, y, w = np.asarray(x, float), np.asarray(y, float), np.atleast_2d(weights).astype(float)
    rank_x, rank_y = _average_ranks(x, w), _average_ranks(y, w)
    total = w.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):  # an empty sample: NaN
        centred_x = rank_x - (w * rank_x).sum(axis=1, keepdims=True) / total
        centred_y = rank_y - (w * rank_y).sum(axis=1, keepdims=True) / total
        cov = (w * centred_x * centred_y).sum(axis=1)
        var_x, var_y = (w * centred_x**2).sum(axis=1), (w * centred_y**2).sum(axis=1)
        return np.where((var_x > 0) & (var_y > 0), cov / np.sqrt(var_x * var_y), np.nan)


def _average_ranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """[draws, n] 1-based average rank of each point in each weighted sample: the copies below
    it, plus the mean position (T + 1) / 2 among the T copies tied with it (its own included)."""
    below = (values[None, :] < values[:, None]).astype(float)  # [i, j]: x_j < x_i
    tied = (values[None, :] == values[:, None]).astype(float)
    return weights @ below.T + (weights @ tied.T + 1) / 2


def weighted_kendall(x, y, weights) -> np.ndarray:
    """Kendall's tau-b [draws] of the weighted samples: (concordant - discordant) pairs over
    sqrt(pairs untied in x * pairs untied in y); copies of one point are tied in both. NaN where
    a variable is constant."""
    x, y, w = np.asarray(x, float), np.asarray(y, float), np.atleast_2d(weights).astype(float)
    sign_x = np.sign(x[:, None] - x[None, :])
    sign_y = np.sign(y[:, None] - y[None, :])

    def pair_sum(matrix: np.ndarray) -> np.ndarray:  # sum_ij w_i w_j m_ij, per draw
        return ((w @ matrix) * w).sum(axis=1)

    score = pair_sum(sign_x * sign_y)
    untied_x, untied_y = pair_sum(np.abs(sign_x)), pair_sum(np.abs(sign_y))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            (untied_x > 0) & (untied_y > 0), score / np.sqrt(untied_x * untied_y), np.nan
        )


# -- the concept bootstrap ---------------------------------------------------------------------


def concept_draws(n_concepts: int, draws: int, seed: int, *keys: str) -> Iterator[np.ndarray]:
    """Chunks [<= DRAW_CHUNK, n_concepts] of concept counts from the stream `rng_for(seed,
    *keys)`: the same draws whatever else the model computes, and in whatever order."""
    rng = rng_for(seed, *keys)
    for start in range(0, draws, DRAW_CHUNK):
        yield resampling_counts(n_concepts, min(DRAW_CHUNK, draws - start), rng)


# -- fct_judge_agreement (METHOD 14) -----------------------------------------------------------

JUDGE_AGREEMENT_SCHEMA = pa.schema(
    [
        ("judge_a", pa.string()),
        ("judge_b", pa.string()),
        ("capability", pa.string()),
        ("n_shared", pa.int64()),
        ("n_concepts", pa.int64()),
        ("yes_rate_a", pa.float64()),
        ("yes_rate_b", pa.float64()),
        ("agreement_frac", pa.float64()),
        ("agreement_ci_lo", pa.float64()),
        ("agreement_ci_hi", pa.float64()),
        ("kappa", pa.float64()),
        ("kappa_ci_lo", pa.float64()),
        ("kappa_ci_hi", pa.float64()),
        ("n_draws", pa.int64()),
        ("reason", pa.string()),
    ]
)
_CELLS = ("both_yes", "a_only", "b_only", "both_no")


def judge_agreement(tables, *, draws: int, seed: int, min_shared: int) -> pa.Table:
    """fct_judge_agreement's rows from `int_judge_pair_tables` (one row per judge pair x concept
    x capability with the 2x2 counts `both_yes`, `a_only`, `b_only`, `both_no` of the items both
    judges answered): per pair, overall (`__all__`) and per capability with shared items. One
    stream of concept draws serves every pair and capability, so their intervals are paired."""
    if tables.num_rows == 0:  # fewer than two judges
        return JUDGE_AGREEMENT_SCHEMA.empty_table()
    pairs, capabilities, counts = _concept_tables(tables)
    point = counts.sum(axis=0)  # [pairs, K, 4]
    agreement, kappa = kappa_from_table(*np.moveaxis(point, -1, 0))
    draws_agreement, draws_kappa = _replicate_kappas(counts, draws, seed)
    agreement_lo, agreement_hi = _intervals(draws_agreement)
    kappa_lo, kappa_hi = _intervals(draws_kappa)
    n_concepts = (counts.sum(axis=-1) > 0).sum(axis=0)  # [pairs, K]
    out = []
    for (p, (judge_a, judge_b)), (k, capability) in product(
        enumerate(pairs), enumerate(capabilities)
    ):
        n_shared = int(point[p, k].sum())
        if n_shared == 0:
            continue
        reason = _kappa_reason(n_shared, kappa[p, k], min_shared)
        has_kappa = reason is None
        out.append(
            {
                "judge_a": judge_a,
                "judge_b": judge_b,
                "capability": capability,
                "n_shared": n_shared,
                "n_concepts": int(n_concepts[p, k]),
                "yes_rate_a": float((point[p, k, 0] + point[p, k, 1]) / n_shared),
                "yes_rate_b": float((point[p, k, 0] + point[p, k, 2]) / n_shared),
                "agreement_frac": float(agreement[p, k]),
                "agreement_ci_lo": _finite(agreement_lo[p, k]),
                "agreement_ci_hi": _finite(agreement_hi[p, k]),
                "kappa": float(kappa[p, k]) if has_kappa else None,
                "kappa_ci_lo": _finite(kappa_lo[p, k]) if has_kappa else None,
                "kappa_ci_hi": _finite(kappa_hi[p, k]) if has_kappa else None,
                "n_draws": int((~np.isnan(draws_kappa[:, p, k])).sum()) if has_kappa else 0,
                "reason": reason,
            }
        )
    return pa.Table.from_pylist(out, schema=JUDGE_AGREEMENT_SCHEMA)


def _concept_tables(tables) -> tuple[list[tuple[str, str]], tuple[str, ...], np.ndarray]:
    """(judge pairs, capabilities with `__all__` first, 2x2 counts [concepts, pairs,
    capabilities, 4]); `__all__` sums every capability's items."""
    rows = tables.select(["judge_a", "judge_b", "concept_id", "capability", *_CELLS]).to_pylist()
    pairs = sorted({(r["judge_a"], r["judge_b"]) for r in rows})
    concepts = sorted({r["concept_id"] for r in rows})
    capabilities = (ALL_CAPABILITIES, *sorted({r["capability"] for r in rows}))
    index = [{key: i for i, key in enumerate(keys)} for keys in (concepts, pairs, capabilities)]
    counts = np.zeros((len(concepts), len(pairs), len(capabilities), len(_CELLS)))
    for r in rows:
        cell = (
            index[0][r["concept_id"]],
            index[1][(r["judge_a"], r["judge_b"])],
            index[2][r["capability"]],
        )
        counts[cell] += [r[name] for name in _CELLS]
    counts[:, :, 0, :] = counts[:, :, 1:, :].sum(axis=2)
    return pairs, capabilities, counts


def _replicate_kappas(counts: np.ndarray, draws: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Raw agreement and kappa [draws, pairs, capabilities] of the concept-bootstrap draws: each
    draw's 2x2 tables are its concept counts times the per-concept tables."""
    flat = counts.reshape(len(counts), -1)
    agreement, kappa = [np.empty((0, *counts.shape[1:3]))], [np.empty((0, *counts.shape[1:3]))]
    for weights in concept_draws(len(counts), draws, seed, "judge_agreement"):
        summed = (weights @ flat).reshape(len(weights), *counts.shape[1:])
        a, k = kappa_from_table(*np.moveaxis(summed, -1, 0))
        agreement.append(a)
        kappa.append(k)
    return np.concatenate(agreement), np.concatenate(kappa)


def _intervals(replicates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """percentile_interval over the draws (axis 0) of replicates of any shape; NaN without
    draws."""
    cells = replicates.shape[1:]
    if len(replicates) == 0:
        return np.full(cells, np.nan), np.full(cells, np.nan)
    lo, hi = percentile_interval(replicates.reshape(len(replicates), -1))
    return lo.reshape(cells), hi.reshape(cells)


def _kappa_reason(n_shared: int, kappa: float, min_shared: int) -> str | None:
    if n_shared < min_shared:
        return f"fewer shared items ({n_shared}) than judge_agreement_min_shared ({min_shared})"
    if np.isnan(kappa):
        return "kappa undefined: both judges gave the same single answer to every shared item"
    return None


def _finite(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


# -- fct_human_agreement (METHOD 15) -----------------------------------------------------------

HUMAN_AGREEMENT_SCHEMA = pa.schema(
    [
        ("judge_id", pa.string()),
        ("n_images", pa.int64()),
        ("n_concepts", pa.int64()),
        ("spearman", pa.float64()),
        ("spearman_ci_lo", pa.float64()),
        ("spearman_ci_hi", pa.float64()),
        ("kendall", pa.float64()),
        ("kendall_ci_lo", pa.float64()),
        ("kendall_ci_hi", pa.float64()),
        ("n_draws", pa.int64()),
        ("n_models", pa.int64()),
        ("ranking_spearman", pa.float64()),
        ("ranking_matches", pa.bool_()),
        ("reason", pa.string()),
    ]
)


def human_agreement(images, *, draws: int, seed: int) -> pa.Table:
    """fct_human_agreement's rows from `int_judge_human_scores` (one row per judge x image with
    both scores: `judge_id`, `model_id`, `concept_id`, `judge_score`, `human_score`). One stream
    of concept draws serves every judge, so the judges' intervals are paired."""
    rows = images.to_pylist()
    if not rows:  # no ratings
        return HUMAN_AGREEMENT_SCHEMA.empty_table()
    concepts, c_idx = encode([r["concept_id"] for r in rows])
    weights = list(concept_draws(len(concepts), draws, seed, "human_agreement"))
    out = []
    for judge_id in sorted({r["judge_id"] for r in rows}):
        mine = [i for i, r in enumerate(rows) if r["judge_id"] == judge_id]
        judge_rows = [rows[i] for i in mine]
        image_weights = [w[:, c_idx[mine]] for w in weights]
        out.append(_judge_human_agreement(judge_id, judge_rows, image_weights))
    return pa.Table.from_pylist(out, schema=HUMAN_AGREEMENT_SCHEMA)


def _judge_human_agreement(judge_id: str, rows: list[dict], image_weights: list) -> dict:
    judge = np.array([r["judge_score"] for r in rows], dtype=float)
    human = np.array([r["human_score"] for r in rows], dtype=float)
    ranking_rho, matches, n_models = ranking_agreement([r["model_id"] for r in rows], judge, human)
    row = {
        "judge_id": judge_id,
        "n_images": len(rows),
        "n_concepts": len({r["concept_id"] for r in rows}),
        "n_models": n_models,
        "ranking_spearman": ranking_rho,
        "ranking_matches": matches,
        "n_draws": 0,
        "reason": None,
    }
    if len(rows) < MIN_IMAGES:
        return row | {"reason": f"fewer than {MIN_IMAGES} images with both scores"}
    ones = np.ones((1, len(rows)))
    row["spearman"] = _finite(weighted_spearman(judge, human, ones)[0])
    row["kendall"] = _finite(weighted_kendall(judge, human, ones)[0])
    if row["spearman"] is None:
        return row | {
            "reason": "correlation undefined: the judge's or the human scores are constant"
        }
    if not image_weights:  # no draws asked for
        return row
    # a draw without any of this judge's concepts has no sample: undefined, left out
    spearman = np.concatenate([weighted_spearman(judge, human, w) for w in image_weights])
    kendall = np.concatenate([weighted_kendall(judge, human, w) for w in image_weights])
    (spearman_lo,), (spearman_hi,) = percentile_interval(spearman[:, None])
    (kendall_lo,), (kendall_hi,) = percentile_interval(kendall[:, None])
    row["spearman_ci_lo"], row["spearman_ci_hi"] = _finite(spearman_lo), _finite(spearman_hi)
    row["kendall_ci_lo"], row["kendall_ci_hi"] = _finite(kendall_lo), _finite(kendall_hi)
    row["n_draws"] = int((~np.isnan(spearman)).sum())
    return row


def ranking_agreement(model_ids, judge, human) -> tuple[float | None, bool | None, int]:
    """(Spearman's rho between the generators' mean judge scores and mean human scores, whether
    their competition rankings are identical, the number of generators); rho and the match are
    None below MIN_MODELS generators, rho also where either mean is constant."""
    models, m_idx = encode(model_ids)
    counts = np.bincount(m_idx, minlength=len(models))
    mean_judge = np.bincount(m_idx, weights=judge, minlength=len(models)) / counts
    mean_human = np.bincount(m_idx, weights=human, minlength=len(models)) / counts
    if len(models) < MIN_MODELS:
        return None, None, len(models)
    rho = _finite(weighted_spearman(mean_judge, mean_human, np.ones((1, len(models))))[0])
    matches = bool(np.array_equal(competition_ranks(mean_judge), competition_ranks(mean_human)))
    return rho, matches, len(models)
