"""Aggregation robustness (METHOD 5, Eq. 9, Table 3) per language x capability, plus a
`__total__` row per language, at scale `full` (every concept) and `1000` (mean over 200 random
1,000-concept subsamples, fixed seed; only when there are more than 1,000 concepts).

n_pt counts valid questions, which depend on the model: every figure is computed per model and
then averaged over models (`method.aggregation_robustness` has the formulas).
"""

import numpy as np
import pyarrow as pa

from method.aggregation_robustness import (
    SHORT_PROMPT_MAX_QUESTIONS,
    SUBSAMPLE_CONCEPTS,
    SUBSAMPLES,
    robustness,
    subsample_matrix,
)
from method.bootstrap import columns_from_arrow, encode, taxonomy_from_arrow


def _mean(x):
    x = np.asarray(x, dtype=float)
    return float(np.nanmean(x)) if np.isfinite(x).any() else None


def model(dbt, session):
    dbt.config(materialized="table")
    seed = int(dbt.config.get("seed"))
    capabilities, groups = taxonomy_from_arrow(dbt.ref("capabilities").to_arrow_table())
    cols = columns_from_arrow(dbt.ref("int_prompt_sufficient_stats").to_arrow_table())
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

    scales = {"full": np.ones((1, len(concepts)))}
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
                ratio = _mean(r["ratio"][:, :, t])
                rows.append(
                    common
                    | {
                        "capability": capability,
                        "variance_ratio": ratio,
                        "variance_increase_frac": None if ratio is None else ratio - 1,
                        "n_prompts": _mean(r["n_prompts"][:, :, t]),
                    }
                )
            total = _mean(r["total_ratio"])
            error_q = _mean(r["short_error_question"])
            error_p = _mean(r["short_error_prompt"])
            rows.append(
                common
                | {
                    "capability": "__total__",
                    "variance_ratio": total,
                    "variance_increase_frac": None if total is None else total - 1,
                    "n_prompts": _mean(r["n_prompts_total"]),
                    "short_error_question_points": None if error_q is None else 100 * error_q,
                    "short_error_prompt_points": None if error_p is None else 100 * error_p,
                    "short_error_increase_frac": (
                        None if error_q is None or error_p is None else error_p / error_q - 1
                    ),
                }
            )
    schema = pa.schema(
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
    return pa.Table.from_pylist(rows, schema=schema)
