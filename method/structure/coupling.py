"""Marginal-controlled coupling (Eq. 7-8, METHOD 9): the per-prompt terms and their inputs.

Per model and (prompt, context, stratum) cell, Delta = joint success rate - pi_1 * pi_2, with the
marginals pi_k taken over the same (language, context, stratum) group in the OTHER prompts
(leave-one-prompt-out); Gamma contrasts a context's Delta with the disc context's of the same
stratum. `coupling_inputs` turns int_question_pairs and the records into the arrays both this
module and the coupling bootstrap (`method.structure.coupling_draws`) read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from method.bootstrap import encode

CONTEXTS = ("edge", "nonanc", "disc")
CONTRASTED_CONTEXTS = ("edge", "nonanc")  # each against `disc`
CONTRASTS = ("edge_vs_disc", "nonanc_vs_disc")
DISC = CONTEXTS.index("disc")


def dense_codes(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense code per row of the combined integer columns, and the first row of each code."""
    combined = np.ravel_multi_index(columns, [int(c.max()) + 1 for c in columns])
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    return inverse, first


# The columns the coupling estimators read: the dbt models fetch only these (at 10x paper scale
# the other columns of int_question_pairs alone take several GB in Arrow).
PAIR_COLUMNS = ("prompt_id", "language", "context", "question_id_1", "question_id_2", "stratum_key")
RECORD_COLUMNS = ("model_id", "prompt_id", "question_id", "outcome")


def coupling_effects(
    outcomes: np.ndarray,
    pair_q1: np.ndarray,
    pair_q2: np.ndarray,
    pair_prompt: np.ndarray,
    pair_language: np.ndarray,
    pair_context: np.ndarray,
    pair_stratum: np.ndarray,
) -> dict[str, np.ndarray]:
    """Per-prompt coupling terms (Eq. 7-8) for every model, as parallel arrays.

    `outcomes`: (models, questions) native y in {0, 1}, NaN where the judgment is missing; a pair
    with a missing endpoint is left out, also from the marginals. Pairs are given by endpoint
    question indices and integer codes of prompt, language, context (index into CONTEXTS) and
    stratum. Per model and cell (prompt, context, stratum): Delta = joint success rate - pi_1 *
    pi_2, where pi_k is the success rate of endpoint k over the pairs of the same (language,
    context, stratum) in the OTHER prompts: group totals minus the cell's own counts. A cell whose
    group has no pair in another prompt has no Delta. Returned terms, one per (model, prompt,
    effect): effect = a context (mean Delta over the prompt's strata) or `<k>_vs_disc` (mean over
    the strata the prompt has in k and in disc of Delta_k - Delta_disc).
    Keys: model, prompt, effect (str), value, n_strata.
    """
    if pair_q1.size == 0:
        return _effects_table([], [], [], [], [])
    cell, cell_first = dense_codes(pair_prompt, pair_context, pair_stratum)
    cell_prompt = pair_prompt[cell_first]
    cell_context = pair_context[cell_first]
    group, _ = dense_codes(pair_language[cell_first], cell_context, pair_stratum[cell_first])
    prompt_stratum, _ = dense_codes(cell_prompt, pair_stratum[cell_first])
    n_cells, n_groups = len(cell_first), int(group.max()) + 1
    n_prompts = int(cell_prompt.max()) + 1

    out = {"model": [], "prompt": [], "effect": [], "value": [], "n_strata": []}
    for m in range(outcomes.shape[0]):
        y1, y2 = outcomes[m, pair_q1], outcomes[m, pair_q2]
        judged = ~(np.isnan(y1) | np.isnan(y2))
        y1, y2 = np.where(judged, y1, 0.0), np.where(judged, y2, 0.0)
        n = np.bincount(cell, judged, n_cells)
        s1 = np.bincount(cell, y1, n_cells)
        s2 = np.bincount(cell, y2, n_cells)
        s11 = np.bincount(cell, y1 * y2, n_cells)
        n_other = np.bincount(group, n, n_groups)[group] - n
        s1_other = np.bincount(group, s1, n_groups)[group] - s1
        s2_other = np.bincount(group, s2, n_groups)[group] - s2
        defined = (n > 0) & (n_other > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            delta = s11 / n - (s1_other / n_other) * (s2_other / n_other)

        for k, context in enumerate(CONTEXTS):
            sel = defined & (cell_context == k)
            _append_means(out, m, cell_prompt[sel], delta[sel], n_prompts, context)

        disc_delta = np.full(int(prompt_stratum.max()) + 1, np.nan)
        is_disc = defined & (cell_context == DISC)
        disc_delta[prompt_stratum[is_disc]] = delta[is_disc]
        matched = disc_delta[prompt_stratum]
        for context, contrast in zip(CONTRASTED_CONTEXTS, CONTRASTS, strict=True):
            sel = defined & (cell_context == CONTEXTS.index(context)) & ~np.isnan(matched)
            diff = delta[sel] - matched[sel]
            _append_means(out, m, cell_prompt[sel], diff, n_prompts, contrast)
    return _effects_table(*(out[k] for k in ("model", "prompt", "effect", "value", "n_strata")))


def _append_means(out: dict, model: int, prompts: np.ndarray, values: np.ndarray, n: int, label):
    """Mean of `values` per prompt (its strata weigh equally), for the prompts that have any."""
    count = np.bincount(prompts, minlength=n)
    total = np.bincount(prompts, values, n)
    present = np.flatnonzero(count)
    out["model"].append(np.full(len(present), model))
    out["prompt"].append(present)
    out["effect"].append(np.full(len(present), label, dtype=object))
    out["value"].append(total[present] / count[present])
    out["n_strata"].append(count[present])


def _effects_table(model, prompt, effect, value, n_strata) -> dict[str, np.ndarray]:
    def cat(parts, dtype):
        return np.concatenate(parts).astype(dtype) if parts else np.array([], dtype=dtype)

    return {
        "model": cat(model, np.int64),
        "prompt": cat(prompt, np.int64),
        "effect": cat(effect, object),
        "value": cat(value, np.float64),
        "n_strata": cat(n_strata, np.int64),
    }


def coupling_prompt_effects(
    pairs: TableSource | CouplingInputs, records: TableSource | None = None
) -> pa.Table:
    """Arrow glue around `coupling_effects` for the dbt model int_coupling_prompt_effects.

    `pairs`: int_question_pairs (prompt_id, language, context, question_id_1, question_id_2,
    stratum_key). `records`: model_id, prompt_id, question_id, outcome (native y, null = missing).
    Or `pairs` = `coupling_inputs(pairs, records)`. Returns one row per (model_id, language,
    prompt_id, effect) with effect_kind (`context` or `contrast`), effect_value (fraction) and
    n_strata.
    """
    outcomes, model_ids, endpoints, codes = as_inputs(pairs, records)
    prompt_ids, pair_prompt = codes["prompt"]
    languages, pair_language = codes["language"]
    language_of_prompt = np.empty(len(prompt_ids), dtype=np.int64)
    language_of_prompt[pair_prompt] = pair_language

    effects = coupling_effects(
        outcomes,
        *endpoints,
        pair_prompt,
        pair_language,
        codes["context"],
        codes["stratum"],
    )
    prompt_of = prompt_ids[effects["prompt"]]
    return pa.table(
        {
            "model_id": pa.array(model_ids[effects["model"]], pa.string()),
            "language": pa.array(languages[language_of_prompt[effects["prompt"]]], pa.string()),
            "prompt_id": pa.array(prompt_of, pa.string()),
            "effect_kind": pa.array(
                np.where(np.isin(effects["effect"], CONTEXTS), "context", "contrast"), pa.string()
            ),
            "effect": pa.array(effects["effect"], pa.string()),
            "effect_value": pa.array(effects["value"], pa.float64()),
            "n_strata": pa.array(effects["n_strata"], pa.int64()),
        }
    )


class CouplingInputs(NamedTuple):
    """The coupling estimators' inputs as arrays (`coupling_inputs`): outcome matrix (models,
    questions), model ids, pair endpoints (question indices) and pair codes (prompt, language,
    context, stratum)."""

    outcomes: np.ndarray
    model_ids: np.ndarray
    endpoints: tuple[np.ndarray, np.ndarray]
    codes: dict


# A table, or a function that reads it: the dbt models hand over readers, so the library holds one
# Arrow table at a time and lets it go once its arrays are built (together they were gigabytes at
# 10x paper scale).
TableSource = pa.Table | Callable[[], pa.Table]


def read_source(source: TableSource) -> pa.Table:
    return source() if callable(source) else source


def as_inputs(pairs: TableSource | CouplingInputs, records: TableSource | None) -> CouplingInputs:
    """The estimators take int_question_pairs and the records (as tables or readers), or their
    arrays already built (`coupling_inputs`)."""
    if isinstance(pairs, CouplingInputs):
        return pairs
    return coupling_inputs(pairs, records)


class _QuestionIndex(NamedTuple):
    """Where a (prompt, question) sits in the outcome matrix: the records' prompt and question
    universes and the sorted combined keys of the matrix's columns."""

    prompts: tuple[str, ...]
    question_ids: tuple[str, ...]
    keys: np.ndarray


def coupling_inputs(pairs: TableSource, records: TableSource) -> CouplingInputs:
    """Outcome matrix (models, questions), model ids, pair endpoints and pair codes, from
    int_question_pairs (PAIR_COLUMNS) and the records (RECORD_COLUMNS: native outcome), the
    records read first."""
    outcomes, model_ids, index = _outcome_matrix(read_source(records))
    endpoints, codes = _pair_arrays(read_source(pairs), index)
    return CouplingInputs(outcomes, model_ids, endpoints, codes)


def _outcome_matrix(records: pa.Table) -> tuple[np.ndarray, np.ndarray, _QuestionIndex]:
    # A question is (prompt, question id): integer codes of each, combined, index the outcome
    # matrix. (Joined string keys took ~2 GB at 10x paper scale; an index is only an address.)
    prompt_universe, record_prompt = encode(records["prompt_id"])
    question_universe, record_question = encode(records["question_id"])
    record_key = record_prompt * len(question_universe) + record_question
    questions, record_q = np.unique(record_key, return_inverse=True)
    model_ids, record_model = _object_codes(records["model_id"])
    y = pc.cast(records["outcome"], pa.float64()).to_numpy(zero_copy_only=False)
    outcomes = np.full((len(model_ids), len(questions)), np.nan)
    outcomes[record_model, record_q] = y  # null -> NaN
    return outcomes, model_ids, _QuestionIndex(prompt_universe, question_universe, questions)


def _pair_arrays(pairs: pa.Table, index: _QuestionIndex) -> tuple[tuple, dict]:
    """The pairs' endpoints (columns of the outcome matrix) and their codes."""

    def endpoint(column: str) -> np.ndarray:
        try:
            _, prompt = encode(pairs["prompt_id"], index.prompts)
            _, question = encode(pairs[column], index.question_ids)
        except ValueError:
            raise ValueError(f"pairs name questions without records ({column})") from None
        key = prompt * len(index.question_ids) + question
        questions = index.keys
        position = np.searchsorted(questions, key)
        clipped = np.minimum(position, len(questions) - 1)
        if position.size and not np.array_equal(questions[clipped], key):
            raise ValueError(f"pairs name questions without records ({column})")
        return position

    prompt_ids, pair_prompt = _object_codes(pairs["prompt_id"])
    # Arrow's dictionary codes, not a numpy object array: at 10x paper scale that is 16 M objects
    try:
        _, pair_context = encode(pairs["context"], CONTEXTS)
    except ValueError as error:
        raise ValueError(f"unknown pair contexts: {error}") from None
    _, pair_stratum = encode(pairs["stratum_key"])
    endpoints = (endpoint("question_id_1"), endpoint("question_id_2"))
    codes = {
        "prompt": (prompt_ids, pair_prompt),
        "language": _object_codes(pairs["language"]),
        "context": pair_context,
        "stratum": pair_stratum,
    }
    return endpoints, codes


def _object_codes(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """`encode` (sorted distinct values, so codes do not depend on row order, and each row's
    code), with the values as an object array that the codes can index."""
    values, codes = encode(column)
    return np.asarray(values, dtype=object), codes
