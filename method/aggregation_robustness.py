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

from method.hcq import hcq_weights

SHORT_PROMPT_MAX_QUESTIONS = 3
# Table 3's scale: 1,000 concepts, averaged over 200 random subsamples.
SUBSAMPLE_CONCEPTS = 1000
SUBSAMPLES = 200


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
