"""Aggregation robustness (METHOD 5, Eq. 9, Table 3): question-micro vs prompt-first weighting.

Under independent, zero-mean, unit-variance adjudication errors, capability t's error variance
is 1/N_t when each valid judgment weighs 1/N_t (question-micro, what HCQ does) and
sum_p(1/n_pt) / P_t^2 when each weighs 1/(P_t * n_pt) (prompt-first). Their ratio is Eq. 9,
mean_p(n_pt) * mean_p(1/n_pt) >= 1 (arithmetic-harmonic mean inequality), equal to 1 exactly
when every contributing prompt has the same count. With the HCQ capability weights alpha_t
(`method.hcq.hcq_weights`), the totals' variances are Vq = sum_t alpha_t^2 / N_t and
Vp = sum_t alpha_t^2 * sum_p(1/n_pt) / P_t^2.

"One short-prompt error": the mean absolute change of the HCQ total when one valid judgment in
a short prompt (at most `SHORT_PROMPT_MAX_QUESTIONS` questions in the prompt, counted before
masking) flips, validity held fixed: alpha_t / N_t under the question rule, alpha_t / (P_t n_pt)
under the prompt rule, averaged over every valid judgment of the short prompts.

Everything is a sum over prompts, so any set of concept subsamples is one matrix product of a
subsample-indicator matrix with per-prompt features, as in the bootstrap.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from method.bootstrap import columns_from_arrow, encode
from method.hcq import hcq_weights
from method.scores import POINTS
from method.taxonomy import Taxonomy

SHORT_PROMPT_MAX_QUESTIONS = 3
# Table 3's scale: 1,000 concepts, averaged over 200 random subsamples.
SUBSAMPLE_CONCEPTS = 1000
SUBSAMPLES = 200
# the columns of int_prompt_sufficient_stats that `robustness_table` reads (its model projects them)
ROBUSTNESS_COLUMNS = (
    "prompt_id", "concept_id", "model_id", "language", "capability", "n_valid", "n_questions",
)  # fmt: skip


def variance_ratio(counts: Sequence[int]) -> float:
    """Eq. 9 for one capability: mean(n) * mean(1/n) over the contributing prompts' counts."""
    n = np.asarray(counts, dtype=float)
    n = n[n > 0]
    if not len(n):
        return float("nan")
    return float(n.mean() * (1.0 / n).mean())


def subsample_matrix(n_concepts: int, size: int, count: int, seed: int) -> np.ndarray:
    """[count, n_concepts] 0/1 rows, each a uniform random `size`-subset (without replacement)."""
    rng = np.random.default_rng(seed)
    out = np.zeros((count, n_concepts))
    for r in range(count):
        out[r, rng.choice(n_concepts, size=size, replace=False)] = 1.0
    return out


def robustness(
    n_valid: np.ndarray,
    is_short: np.ndarray,
    prompt_concept: np.ndarray,
    subsamples: np.ndarray,
    capability_groups: Sequence[str],
) -> dict[str, np.ndarray]:
    """Eq. 9 and its totals for every subsample and model, prompts of one language.

    n_valid [P, M, T]: valid questions n_pt of prompt p, model m, capability t.
    is_short [P]: the prompt has at most SHORT_PROMPT_MAX_QUESTIONS questions.
    prompt_concept [P]: the column of `subsamples` [R, C] holding each prompt's concept.
    Returns arrays [R, M, T] (`ratio`, `n_prompts`) and [R, M] (`total_ratio` = Vp / Vq,
    `n_prompts_total`, `short_error_question`, `short_error_prompt`, the last two as fractions).
    """
    n = np.asarray(n_valid, dtype=float)
    n_prompts, n_models, n_caps = n.shape
    contributes = (n > 0).astype(float)
    with np.errstate(divide="ignore"):
        inverse = np.where(n > 0, 1.0 / n, 0.0)
    short = np.asarray(is_short, dtype=float)[:, None, None]
    features = np.stack([n, contributes, inverse, short * n, short * contributes], axis=-1).reshape(
        n_prompts, -1
    )
    any_valid = (n.sum(axis=2) > 0).astype(float)  # [P, M]
    z = np.asarray(subsamples, dtype=float)[:, np.asarray(prompt_concept)]  # [R, P]
    sums = (z @ features).reshape(len(z), n_models, n_caps, 5)
    big_n, big_p, harmonic, short_n, short_p = np.moveaxis(sums, -1, 0)
    available = big_n > 0
    alpha = hcq_weights(available, capability_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(big_p > 0, (big_n / big_p) * (harmonic / big_p), np.nan)
        v_question = np.where(available, alpha**2 / big_n, 0.0).sum(axis=-1)
        v_prompt = np.where(available, alpha**2 * harmonic / big_p**2, 0.0).sum(axis=-1)
        n_short = short_n.sum(axis=-1)
        error_question = np.where(available, short_n * alpha / big_n, 0.0).sum(axis=-1)
        error_prompt = np.where(available, short_p * alpha / big_p, 0.0).sum(axis=-1)
        return {
            "ratio": ratio,
            "n_prompts": big_p,
            "total_ratio": np.where(v_question > 0, v_prompt / v_question, np.nan),
            "n_prompts_total": z @ any_valid,
            "short_error_question": np.where(n_short > 0, error_question / n_short, np.nan),
            "short_error_prompt": np.where(n_short > 0, error_prompt / n_short, np.nan),
        }


# -- the fct_aggregation_robustness table -----------------------------------------------------

TOTAL_ROW = "__total__"
FULL_SCALE = "full"

ROBUSTNESS_SCHEMA = pa.schema(
    [
        ("language", pa.string()),
        ("capability", pa.string()),
        ("scale", pa.string()),
        ("variance_ratio", pa.float64()),
        ("variance_increase_frac", pa.float64()),
        ("n_prompts", pa.float64()),
        ("short_error_question_points", pa.float64()),
        ("short_error_prompt_points", pa.float64()),
        ("short_error_increase_frac", pa.float64()),
        ("n_models", pa.int64()),
        ("n_subsamples", pa.int64()),
    ]
)


def robustness_table(stats_table: pa.Table, capabilities_table: pa.Table, seed: int) -> pa.Table:
    """Table 3 per language x capability x scale, plus a `__total__` row per language and scale.

    `stats_table`: int_prompt_sufficient_stats (n_valid and n_questions per prompt x model x
    capability); `capabilities_table`: the taxonomy seed. Scale `full` counts every concept;
    scale `1000` (only above 1,000 concepts) averages `SUBSAMPLES` random 1,000-concept subsets
    drawn with `seed`. n_pt depends on the model, so every figure is computed per model
    (`robustness`) and then averaged over models (NaN models skipped, None when none is defined).
    """
    taxonomy = Taxonomy.from_arrow(capabilities_table)
    capabilities, groups = taxonomy.capabilities, taxonomy.capability_groups
    cols = columns_from_arrow(stats_table)
    prompts, p_idx = encode(cols["prompt_id"])
    models, m_idx = encode(cols["model_id"])
    concepts, c_idx = encode(cols["concept_id"])
    _, t_idx = encode(cols["capability"], capabilities)
    shape = (len(prompts), len(models), len(capabilities))
    flat = np.ravel_multi_index((p_idx, m_idx, t_idx), shape)
    size = int(np.prod(shape))
    n_valid = np.bincount(flat, weights=cols["n_valid"], minlength=size).reshape(shape)
    n_questions = np.bincount(flat, weights=cols["n_questions"], minlength=size).reshape(shape)
    is_short = n_questions.sum(axis=2).max(axis=1) <= SHORT_PROMPT_MAX_QUESTIONS
    prompt_concept = np.zeros(len(prompts), dtype=np.int64)
    prompt_concept[p_idx] = c_idx
    languages, l_idx = encode(cols["language"])
    prompt_language = np.zeros(len(prompts), dtype=np.int64)
    prompt_language[p_idx] = l_idx

    scales = {FULL_SCALE: np.ones((1, len(concepts)))}
    if len(concepts) > SUBSAMPLE_CONCEPTS:
        scales[str(SUBSAMPLE_CONCEPTS)] = subsample_matrix(
            len(concepts), SUBSAMPLE_CONCEPTS, SUBSAMPLES, seed
        )
    rows = []
    for li, language in enumerate(languages):
        mine = prompt_language == li
        for scale, subsamples in scales.items():
            r = robustness(n_valid[mine], is_short[mine], prompt_concept[mine], subsamples, groups)
            common = {"language": language, "scale": scale, "n_models": len(models)}
            common["n_subsamples"] = len(subsamples)
            for t, capability in enumerate(capabilities):
                ratio = _model_mean(r["ratio"][:, :, t])
                rows.append(
                    common
                    | {
                        "capability": capability,
                        "variance_ratio": ratio,
                        "variance_increase_frac": None if ratio is None else ratio - 1,
                        "n_prompts": _model_mean(r["n_prompts"][:, :, t]),
                    }
                )
            rows.append(common | _total_row(r))
    return pa.Table.from_pylist(rows, schema=ROBUSTNESS_SCHEMA)


def _total_row(r: dict[str, np.ndarray]) -> dict:
    """The `__total__` row's figures: Vp / Vq and the one-short-prompt-error comparison."""
    total = _model_mean(r["total_ratio"])
    error_q = _model_mean(r["short_error_question"])
    error_p = _model_mean(r["short_error_prompt"])
    return {
        "capability": TOTAL_ROW,
        "variance_ratio": total,
        "variance_increase_frac": None if total is None else total - 1,
        "n_prompts": _model_mean(r["n_prompts_total"]),
        "short_error_question_points": None if error_q is None else POINTS * error_q,
        "short_error_prompt_points": None if error_p is None else POINTS * error_p,
        "short_error_increase_frac": (
            None if error_q is None or error_p is None else error_p / error_q - 1
        ),
    }


def _model_mean(x) -> float | None:
    """Mean over models and subsamples of the defined values; None when none is defined."""
    x = np.asarray(x, dtype=float)
    return float(np.nanmean(x)) if np.isfinite(x).any() else None
