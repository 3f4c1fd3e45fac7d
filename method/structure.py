"""Prompt-bootstrap intervals for the structural diagnostics (METHOD 8-9), vectorised with numpy.

Root controls (`prompt_bootstrap`): the difference is a ratio of sums over prompts (numerator =
the prompt's sum of local - baseline over its eligible contexts, denominator = its number of
contexts). A bootstrap draw resamples the prompts with replacement, which multiplies each
prompt's sums by how often the draw picked it, so one matrix of exact multinomial resampling
counts (draws x prompts) times the per-prompt sums (prompts x cells) gives every draw at once.
The baselines are held at their full-sample values. That drops their own noise, which moves
against the local terms (a prompt's R is in its entity-mates' baselines), so the interval errs
wide: for one entity with one survival rate, whose C prompts hold E eligible contexts, the diff
is sum_E R_p (C - E) / (C - 1) - E / (C - 1) * sum_rest R_p, of variance E (C - E) C / (C - 1)^2
per unit variance of R, against E with the baselines fixed: about C / (C - E) times too large.

Coupling (`coupling_bootstrap`): the marginals of Delta pool the other prompts of a stratum, and
their noise, shared by every prompt of the stratum, is a large part of Gamma's uncertainty where
strata are rare, so every draw carries it: recomputed exactly, or to first order (see there).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from method.bootstrap import encode, percentile_interval, resampling_counts, rng_for
from method.scores import POINTS

MACRO_MODEL = "__macro__"


def macro_mean(
    estimates: np.ndarray, draws: np.ndarray, present: np.ndarray
) -> tuple[float, np.ndarray, int]:
    """The `MACRO_MODEL` row of one cell: the mean over its member models (those with an
    estimate), resampled consistently because all members share each draw's prompt resample.

    `estimates` (members,), `draws` (draws, members), `present` (units, members) bool: where a
    member has the cell. Returns the mean estimate, the per-draw mean of the members defined in
    that draw (NaN where none is) and the number of units where any member is present.
    """
    with warnings.catch_warnings():
        # a draw in which no member is defined stays NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        macro_draws = np.nanmean(draws, axis=1)
    return estimates.mean(), macro_draws, int(present.any(axis=1).sum())


def ratio_draws(
    numerator: np.ndarray, denominator: np.ndarray, counts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Point estimate (cells,) and bootstrap draws (draws, cells) of sum(num) / sum(den).

    `numerator`, `denominator`: (units, cells) per-unit sums; a zero denominator gives NaN.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = numerator.sum(axis=0) / denominator.sum(axis=0)
        draws = (counts @ numerator) / (counts @ denominator)
    estimate = np.where(denominator.sum(axis=0) > 0, estimate, np.nan)
    draws = np.where(np.isfinite(draws), draws, np.nan)
    return estimate, draws


def prompt_bootstrap(
    table: pa.Table,
    *,
    split_by: Sequence[str],
    cell_by: Sequence[str],
    unit: str,
    numerator: str,
    denominator: str | None,
    draws: int,
    seed: int,
    macro_over: str | None = None,
    level: float = 0.95,
) -> list[dict]:
    """Ratio-of-sums estimates with prompt-bootstrap percentile intervals, one dict per cell.

    Within each `split_by` group (e.g. language) every cell (`cell_by`, e.g. model x context)
    shares one matrix of resampling counts over the group's units (`unit`, e.g. prompt_id), so a
    macro mean over `macro_over` (e.g. model_id) is resampled consistently: its draws are the mean
    of the member cells' draws, and it is reported as `MACRO_MODEL` in that column. Rows without a
    `denominator` column count 1 each. Each dict has the split and cell columns, `estimate`,
    `ci_lo`, `ci_hi` and `n_units` (units with a positive denominator).
    """
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    num = _numbers(table, numerator)
    den = np.ones(len(num)) if denominator is None else _numbers(table, denominator)
    split_keys, split_idx = _factorise(table, split_by)
    cell_keys, cell_idx = _factorise(table, cell_by)
    _, unit_idx = _factorise(table, [unit])

    rows: list[dict] = []
    for s, split in enumerate(split_keys):
        rows_in = np.flatnonzero(split_idx == s)
        units_in, local_unit = np.unique(unit_idx[rows_in], return_inverse=True)
        cells_in, local_cell = np.unique(cell_idx[rows_in], return_inverse=True)
        n_units, n_cells = len(units_in), len(cells_in)
        flat = local_unit * n_cells + local_cell
        num_matrix = np.bincount(flat, num[rows_in], n_units * n_cells).reshape(n_units, n_cells)
        den_matrix = np.bincount(flat, den[rows_in], n_units * n_cells).reshape(n_units, n_cells)

        counts = resampling_counts(n_units, draws, rng_for(seed, *map(str, split)))
        estimate, draw_matrix = ratio_draws(num_matrix, den_matrix, counts)
        n_defined = (den_matrix > 0).sum(axis=0)
        labels = [dict(zip(cell_by, cell_keys[c], strict=True)) for c in cells_in]

        if macro_over is not None:
            groups: dict[tuple, list[int]] = {}
            for k, label in enumerate(labels):
                if np.isfinite(estimate[k]):
                    rest = tuple((c, v) for c, v in label.items() if c != macro_over)
                    groups.setdefault(rest, []).append(k)
            for rest, members in sorted(groups.items()):
                labels.append({**dict(rest), macro_over: MACRO_MODEL})
                macro, macro_draws, macro_units = macro_mean(
                    estimate[members], draw_matrix[:, members], den_matrix[:, members] > 0
                )
                estimate = np.append(estimate, macro)
                draw_matrix = np.column_stack([draw_matrix, macro_draws])
                n_defined = np.append(n_defined, macro_units)

        lo, hi = percentile_interval(draw_matrix, level)
        for k, label in enumerate(labels):
            rows.append(
                {
                    **dict(zip(split_by, split, strict=True)),
                    **label,
                    "estimate": _float(estimate[k]),
                    "ci_lo": _float(lo[k]),
                    "ci_hi": _float(hi[k]),
                    "n_units": int(n_defined[k]),
                }
            )
    return rows


def _numbers(table: pa.Table, column: str) -> np.ndarray:
    return np.asarray(table.column(column).to_numpy(zero_copy_only=False), dtype=np.float64)


def _factorise(table: pa.Table, columns: Sequence[str]) -> tuple[list[tuple], np.ndarray]:
    """Distinct value tuples of `columns` (sorted) and each row's index into them."""
    if not columns:
        return [()], np.zeros(table.num_rows, dtype=np.int64)
    codes, uniques = [], []
    for name in columns:
        distinct, code = encode(table.column(name))
        uniques.append(distinct)
        codes.append(code)
    combined = np.ravel_multi_index(codes, [len(u) for u in uniques])
    keys, inverse = np.unique(combined, return_inverse=True)
    positions = np.unravel_index(keys, [len(u) for u in uniques])
    labels = [
        tuple(u[p] for u, p in zip(uniques, pos, strict=True))
        for pos in zip(*positions, strict=True)
    ]
    return labels, inverse


def _float(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


ROOT_CONTROLS_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("language", pa.string()),
        ("n_contexts", pa.int64()),
        ("n_prompts", pa.int64()),
        ("local_survival", pa.float64()),
        ("baseline_survival", pa.float64()),
        ("diff", pa.float64()),
        ("ci_lo", pa.float64()),
        ("ci_hi", pa.float64()),
        ("n_draws", pa.int64()),
    ]
)


def root_controls(contexts: pa.Table, *, draws: int, seed: int) -> pa.Table:
    """Cross-prompt root controls (Eq. 6, METHOD 8, Figure 2 right), one row per model x language.

    `contexts`: int_root_contexts (model_id, language, prompt_id, local_survival,
    baseline_survival, is_eligible). Over the eligible contexts: their count, the prompts with
    one, mean local survival, mean leave-one-prompt-out baseline and diff = local - baseline,
    all in points, with the 95% percentile interval of diff from `prompt_bootstrap` over the
    language's prompts (a prompt's contexts travel together; baselines held fixed).
    """
    contexts = contexts.filter(pc.equal(contexts["is_eligible"], True))
    local = pc.cast(contexts["local_survival"], pa.float64())
    contexts = contexts.append_column("diff", pc.subtract(local, contexts["baseline_survival"]))
    intervals = prompt_bootstrap(
        contexts,
        split_by=["language"],
        cell_by=["model_id"],
        unit="prompt_id",
        numerator="diff",
        denominator=None,
        draws=draws,
        seed=seed,
    )
    means = {}
    # one thread: a threaded hash aggregate sums in a varying order, so the means' last bits
    # changed from build to build
    for row in (
        contexts.group_by(["model_id", "language"], use_threads=False)
        .aggregate([("local_survival", "mean"), ("baseline_survival", "mean"), ("diff", "count")])
        .to_pylist()
    ):
        means[row["model_id"], row["language"]] = row
    rows = []
    for r in intervals:
        m = means[r["model_id"], r["language"]]
        rows.append(
            {
                "model_id": r["model_id"],
                "language": r["language"],
                "n_contexts": m["diff_count"],
                "n_prompts": r["n_units"],
                "local_survival": m["local_survival_mean"] * POINTS,
                "baseline_survival": m["baseline_survival_mean"] * POINTS,
                "diff": r["estimate"] * POINTS,
                "ci_lo": None if r["ci_lo"] is None else r["ci_lo"] * POINTS,
                "ci_hi": None if r["ci_hi"] is None else r["ci_hi"] * POINTS,
                "n_draws": draws,
            }
        )
    return pa.Table.from_pylist(rows, schema=ROOT_CONTROLS_SCHEMA)


# -- Marginal-controlled coupling (Eq. 7-8) ------------------------------------------------------

CONTEXTS = ("edge", "nonanc", "disc")
CONTRASTED_CONTEXTS = ("edge", "nonanc")  # each against `disc`
CONTRASTS = ("edge_vs_disc", "nonanc_vs_disc")
_DISC = CONTEXTS.index("disc")


def _codes(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    cell, cell_first = _codes(pair_prompt, pair_context, pair_stratum)
    cell_prompt = pair_prompt[cell_first]
    cell_context = pair_context[cell_first]
    group, _ = _codes(pair_language[cell_first], cell_context, pair_stratum[cell_first])
    prompt_stratum, _ = _codes(cell_prompt, pair_stratum[cell_first])
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
        is_disc = defined & (cell_context == _DISC)
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
    pairs: pa.Table | CouplingInputs, records: pa.Table | None = None
) -> pa.Table:
    """Arrow glue around `coupling_effects` for the dbt model int_coupling_prompt_effects.

    `pairs`: int_question_pairs (prompt_id, language, context, question_id_1, question_id_2,
    stratum_key). `records`: model_id, prompt_id, question_id, outcome (native y, null = missing).
    Or `pairs` = `coupling_inputs(pairs, records)`. Returns one row per (model_id, language,
    prompt_id, effect) with effect_kind (`context` or `contrast`), effect_value (fraction) and
    n_strata.
    """
    outcomes, model_ids, endpoints, codes = _as_inputs(pairs, records)
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


def _as_inputs(pairs: pa.Table | CouplingInputs, records: pa.Table | None) -> CouplingInputs:
    """The estimators take int_question_pairs and the records as Arrow tables, or their arrays
    already built: a caller that builds them first (the dbt models) lets the Arrow tables go
    before the heavy part (2.3 GB at 10x paper scale)."""
    if isinstance(pairs, CouplingInputs):
        return pairs
    return coupling_inputs(pairs, records)


def coupling_inputs(pairs: pa.Table, records: pa.Table) -> CouplingInputs:
    """Outcome matrix (models, questions), model ids, pair endpoints and pair codes, from
    int_question_pairs (PAIR_COLUMNS) and the records (RECORD_COLUMNS: native outcome)."""
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

    def endpoint(column: str) -> np.ndarray:
        try:
            _, prompt = encode(pairs["prompt_id"], prompt_universe)
            _, question = encode(pairs[column], question_universe)
        except ValueError:
            raise ValueError(f"pairs name questions without records ({column})") from None
        key = prompt * len(question_universe) + question
        index = np.searchsorted(questions, key)
        if index.size and not np.array_equal(questions[np.minimum(index, len(questions) - 1)], key):
            raise ValueError(f"pairs name questions without records ({column})")
        return index

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
    return CouplingInputs(outcomes, model_ids, endpoints, codes)


def _object_codes(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """`encode` (sorted distinct values, so codes do not depend on row order, and each row's
    code), with the values as an object array that the codes can index."""
    values, codes = encode(column)
    return np.asarray(values, dtype=object), codes


# -- Coupling bootstrap with the marginals recomputed in every draw -----------------------------


class _CouplingCells:
    """One language's (prompt, context, stratum) cells with per-model pair sums, ready for draws.

    `n`, `s1`, `s2`, `s11`: (models, cells) judged pairs, endpoint-1, endpoint-2 and joint
    successes. `group`: the cell's (context, stratum) marginal group; `prompt_stratum`: the cell's
    (prompt, stratum), which pairs a k cell with the prompt's disc cell of the same stratum.
    """

    def __init__(self, prompt, context, group, prompt_stratum, n, s1, s2, s11, n_prompts):
        self.prompt, self.context, self.group = prompt, context, group
        self.prompt_stratum = prompt_stratum
        self.n, self.s1, self.s2, self.s11 = n, s1, s2, s11
        self.n_models, self.n_prompts = n.shape[0], n_prompts
        self.n_groups = int(group.max()) + 1 if group.size else 0
        self.n_prompt_strata = int(prompt_stratum.max()) + 1 if prompt_stratum.size else 0
        with np.errstate(invalid="ignore", divide="ignore"):
            self.joint = np.where(n > 0, s11 / np.where(n > 0, n, 1), 0.0)

    def of_model(self, m: int) -> _CouplingCells:
        """The same cells with model `m`'s sums only (models never mix in the estimators)."""
        one = slice(m, m + 1)
        return _CouplingCells(
            self.prompt,
            self.context,
            self.group,
            self.prompt_stratum,
            self.n[one],
            self.s1[one],
            self.s2[one],
            self.s11[one],
            self.n_prompts,
        )


def _coupling_cells(outcomes, pair_q1, pair_q2, pair_prompt, pair_context, pair_stratum):
    """Cells of ONE language (prompt codes dense 0..P-1), per-model sums on native outcomes."""
    cell, first = _codes(pair_prompt, pair_context, pair_stratum)
    n_cells = len(first)
    group, _ = _codes(pair_context[first], pair_stratum[first])
    prompt_stratum, _ = _codes(pair_prompt[first], pair_stratum[first])
    sums = np.empty((4, outcomes.shape[0], n_cells))  # n, s1, s2, s11 per model and cell
    # One model at a time: (models, pairs) temporaries would take ~6 GB per language at 10x
    # paper scale; per model, each cell's terms are still added in pair order, so the sums are
    # the same to the bit.
    for m, model_outcomes in enumerate(outcomes):
        y1, y2 = model_outcomes[pair_q1], model_outcomes[pair_q2]
        judged = ~(np.isnan(y1) | np.isnan(y2))
        y1, y2 = np.where(judged, y1, 0.0), np.where(judged, y2, 0.0)
        for k, values in enumerate((judged.astype(np.float64), y1, y2, y1 * y2)):
            sums[k, m] = np.bincount(cell, values, n_cells)
    return _CouplingCells(
        pair_prompt[first],
        pair_context[first],
        group,
        prompt_stratum,
        *sums,
        int(pair_prompt.max()) + 1,
    )


EFFECTS = CONTEXTS + CONTRASTS


def coupling_draw_sums(
    cells: _CouplingCells, weights: np.ndarray, presence: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Numerator and denominator (models, EFFECTS) of every effect for one prompt resample.

    `weights`: (prompts,) how often the resample holds each prompt (all ones = the sample itself).
    The resampled world is recomputed from scratch: the marginal group totals are draw-weighted
    sums over the prompts, and the leave-one-prompt-out marginal of prompt p leaves out ALL w_p
    copies of p (totals - w_p * own), so a prompt never enters its own baseline, not even through
    a duplicate. Each copy then contributes its own term, so p's term counts w_p times:
    numerator = sum_p w_p * term_p, denominator = sum_p w_p over the prompts whose term is
    defined (a stratum whose group has no pair outside p's copies has no Delta in that draw).
    Effect = mean Delta over the prompt's strata of a context, or for `<k>_vs_disc` the mean over
    the strata the prompt has in k and in disc of Delta_k - Delta_disc. `presence`, if given
    (models, EFFECTS, prompts) bool, is set where a drawn prompt has the effect.
    """
    m_count, n_prompts = cells.n_models, cells.n_prompts
    w_cell = weights[cells.prompt]
    keep = np.flatnonzero(w_cell > 0)
    w = w_cell[keep]
    group = cells.group[keep]
    n, s1, s2 = cells.n[:, keep], cells.s1[:, keep], cells.s2[:, keep]
    model = np.arange(m_count)[:, None]
    flat_group = (model * cells.n_groups + group[None, :]).ravel()

    def others(own):
        weighted = own * w
        totals = np.bincount(flat_group, weighted.ravel(), m_count * cells.n_groups)
        return totals.reshape(m_count, cells.n_groups)[:, group] - weighted

    n_other = others(n)
    defined = (n > 0) & (n_other > 0)
    safe = np.where(defined, n_other, 1.0)
    delta = cells.joint[:, keep] - (others(s1) / safe) * (others(s2) / safe)

    prompt = cells.prompt[keep]
    context = cells.context[keep]
    numerator = np.zeros((m_count, len(EFFECTS)))
    denominator = np.zeros((m_count, len(EFFECTS)))

    def add_means(effect_of_cell, mask, values):
        """Per model, prompt-weighted sum of per-prompt means of `values` (cells in `mask`)."""
        rows, cols = np.nonzero(mask)
        key = (rows * len(EFFECTS) + effect_of_cell[cols]) * n_prompts + prompt[cols]
        size = m_count * len(EFFECTS) * n_prompts
        count = np.bincount(key, minlength=size)
        total = np.bincount(key, values[rows, cols], size)
        present = np.flatnonzero(count)
        if presence is not None:
            presence.ravel()[present] = True
        cell_of = present // n_prompts  # (model, effect)
        w_prompt = weights[present % n_prompts]
        numerator.ravel()[:] += np.bincount(
            cell_of, w_prompt * total[present] / count[present], m_count * len(EFFECTS)
        )
        denominator.ravel()[:] += np.bincount(cell_of, w_prompt, m_count * len(EFFECTS))

    add_means(context, defined, delta)

    disc_delta = np.full((m_count, cells.n_prompt_strata), np.nan)
    prompt_stratum = cells.prompt_stratum[keep]
    is_disc = defined & (context == _DISC)[None, :]
    rows, cols = np.nonzero(is_disc)
    disc_delta[rows, prompt_stratum[cols]] = delta[rows, cols]
    matched = disc_delta[:, prompt_stratum]
    contrast_of = np.full(len(CONTEXTS), -1)
    for k, c in zip(CONTRASTED_CONTEXTS, CONTRASTS, strict=True):
        contrast_of[CONTEXTS.index(k)] = EFFECTS.index(c)
    in_contrast = defined & (contrast_of[context] >= 0)[None, :] & ~np.isnan(matched)
    add_means(contrast_of[context], in_contrast, delta - np.where(np.isnan(matched), 0, matched))
    return numerator, denominator


def coupling_influence(cells: _CouplingCells) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point estimate and linearised prompt influence of every effect, for one language's cells.

    With prompt weights w (all ones = the sample), theta_e(w) = sum_p w_p term_p(w) / sum_p w_p
    over the prompts with the effect, where term_p depends on w through its leave-one-prompt-out
    marginals pi^{-p}(w) = (T(w) - w_p a_p) / (C(w) - w_p c_p) of each (context, stratum) group
    (T, C: draw-weighted group totals of endpoint successes and judged pairs). Returns estimate
    (models, EFFECTS), influence (models, EFFECTS, prompts) = d theta / d w_p at w = 1, and
    presence (models, EFFECTS, prompts). The influence has three parts, all divided by D (number
    of prompts with the effect): p's own term minus theta (its weight and the normalisation), and
    the effect of p's counts on every OTHER prompt's marginals in the groups p touches:
    sum over cells c of other prompts in p's group of coef_c * d Delta_c / d w_p, with
    d Delta_c / d w_p = -(pi2_c (a1_p - pi1_c n_p) + pi1_c (a2_p - pi2_c n_p)) / N_{-c}, where
    coef_c is the weight of Delta_c in its prompt's term (1/K for a context cell; +1/K for a
    contrasted cell and -1/K for its matched disc cell). That per-group sum is pre-aggregated,
    less p's own cell (p never enters its own marginal). The set of defined cells is held at its
    full-sample value.
    """
    m_count, n_prompts = cells.n_models, cells.n_prompts
    n_groups = cells.n_groups
    model = np.arange(m_count)[:, None]
    flat_group = (model * n_groups + cells.group[None, :]).ravel()
    flat_prompt = (model * n_prompts + cells.prompt[None, :]).ravel()

    def group_others(values):  # (models, cells): group total less the cell itself
        totals = np.bincount(flat_group, values.ravel(), m_count * n_groups)
        return totals.reshape(m_count, n_groups)[:, cells.group] - values

    def per_prompt(values):  # (models, cells) -> (models, prompts)
        return np.bincount(flat_prompt, values.ravel(), m_count * n_prompts).reshape(
            m_count, n_prompts
        )

    n, s1, s2 = cells.n, cells.s1, cells.s2
    n_other = group_others(n)
    defined = (n > 0) & (n_other > 0)
    safe = np.where(defined, n_other, 1.0)
    pi1 = np.where(defined, group_others(s1) / safe, 0.0)
    pi2 = np.where(defined, group_others(s2) / safe, 0.0)
    delta = np.where(defined, cells.joint - pi1 * pi2, 0.0)
    # d Delta_c / d w_p = -(u_c a1_p + v_c a2_p - z_c n_p) for p's cell in c's group, p != prompt(c)
    u, v, z = pi2 / safe, pi1 / safe, 2.0 * pi1 * pi2 / safe

    disc_cell = np.full(cells.n_prompt_strata, -1)
    is_disc_cell = cells.context == _DISC
    disc_cell[cells.prompt_stratum[is_disc_cell]] = np.flatnonzero(is_disc_cell)
    matched = disc_cell[cells.prompt_stratum]
    has_match = matched >= 0
    matched_safe = np.where(has_match, matched, 0)

    estimate = np.full((m_count, len(EFFECTS)), np.nan)
    influence = np.zeros((m_count, len(EFFECTS), n_prompts))
    presence = np.zeros((m_count, len(EFFECTS), n_prompts), dtype=bool)
    for e, effect in enumerate(EFFECTS):
        if effect in CONTEXTS:
            mask = defined & (cells.context == CONTEXTS.index(effect))[None, :]
            values = delta
        else:
            k = CONTEXTS.index(CONTRASTED_CONTEXTS[CONTRASTS.index(effect)])
            mask = defined & ((cells.context == k) & has_match)[None, :] & defined[:, matched_safe]
            values = delta - delta[:, matched_safe]
        count = per_prompt(mask.astype(np.float64))
        present = count > 0
        inv_count = np.where(present, 1.0 / np.where(present, count, 1.0), 0.0)
        weight = np.where(mask, inv_count[:, cells.prompt], 0.0)  # coef of the cell's own Delta
        term = per_prompt(weight * values)
        coef = weight.copy()
        if effect in CONTRASTS:  # the matched disc cell enters with the opposite sign
            rows, cols = np.nonzero(mask)
            np.subtract.at(coef, (rows, matched[cols]), weight[rows, cols])
        n_with = present.sum(axis=1).astype(np.float64)
        ok = n_with > 0
        denominator = np.where(ok, n_with, 1.0)
        theta = np.where(ok, term.sum(axis=1) / denominator, np.nan)
        cross = -(
            cells.s1 * group_others(coef * u)
            + cells.s2 * group_others(coef * v)
            - cells.n * group_others(coef * z)
        )
        own = np.where(present, term - np.where(ok, theta, 0.0)[:, None], 0.0)
        influence[:, e] = np.where(ok[:, None], (own + per_prompt(cross)) / denominator[:, None], 0)
        estimate[:, e] = theta
        presence[:, e] = present
    return estimate, influence, presence


def _influence_per_model(cells: _CouplingCells):
    """`coupling_influence` one model at a time: its (models, cells) temporaries took ~5 GB at
    10x paper scale. Every model's figures are computed exactly as in one call (models never mix;
    the same terms are added in the same order)."""
    parts = [coupling_influence(cells.of_model(m)) for m in range(cells.n_models)]
    return tuple(np.concatenate([part[k] for part in parts]) for k in range(3))


COUPLING_METHODS = ("auto", "exact", "linearised")
# `auto` evaluates a language's draws exactly while models x cells x draws stays within this many
# cell evaluations (about 30 s on a 2-core laptop at ~100 ns each), and linearised above it.
DEFAULT_EXACT_BUDGET = 300_000_000


def coupling_bootstrap(
    pairs: pa.Table | CouplingInputs,
    records: pa.Table | None = None,
    *,
    draws: int,
    seed: int,
    level: float = 0.95,
    method: str = "auto",
    exact_budget: int = DEFAULT_EXACT_BUDGET,
) -> list[dict]:
    """Delta per context and Gamma per contrast with prompt-bootstrap intervals (METHOD 9).

    Per language, one matrix of multinomial resampling counts over the language's prompts
    (`rng_for(seed, language)`), shared by all models, so the macro mean over models
    (`MACRO_MODEL`) is resampled consistently (its draws = the mean of the defined models' draws).
    `method="exact"`: every draw recomputes the leave-one-prompt-out marginals in the resampled
    world (`coupling_draw_sums`), so the marginals' own sampling noise, shared by all prompts of
    a stratum, enters the interval (one pass over the model x cell sums per draw).
    `method="linearised"`: each draw is theta + (w - 1) @ IF, the first-order expansion around
    w = 1 with the influence of `coupling_influence`; one matrix product gives all draws. It
    leaves out the second-order terms and the draws in which a stratum loses its Delta, both of
    which come from strata seen in few prompts: in small worlds, where many strata are rare, its
    intervals are 2-7% narrower than the exact ones and under-cover (README, Structural
    diagnostics); at paper scale, where almost every cell's stratum spans dozens of prompts,
    the two agree.
    `method="auto"`: exact for a language whose models x cells x draws is at most
    `exact_budget`, linearised above it (exact there would take minutes to an hour).
    `pairs` and `records` as for `coupling_prompt_effects` (or `pairs` = their
    `coupling_inputs`). Returns dicts: language, model_id, effect (a context or a contrast),
    estimate, ci_lo, ci_hi (fractions), n_units (prompts with the effect), method (`exact` or
    `linearised`).
    """
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    if method not in COUPLING_METHODS:
        raise ValueError(f"method must be one of {COUPLING_METHODS}, got {method!r}")
    outcomes, model_ids, endpoints, codes = _as_inputs(pairs, records)
    languages, pair_language = codes["language"]
    rows: list[dict] = []
    for lang_code, language in enumerate(languages):
        sel = np.flatnonzero(pair_language == lang_code)
        if sel.size == 0:
            continue
        _, prompt_local = np.unique(codes["prompt"][1][sel], return_inverse=True)
        cells = _coupling_cells(
            outcomes,
            endpoints[0][sel],
            endpoints[1][sel],
            prompt_local,
            codes["context"][sel],
            codes["stratum"][sel],
        )
        chosen = method if method != "auto" else _affordable_method(cells, draws, exact_budget)
        counts = resampling_counts(cells.n_prompts, draws, rng_for(seed, str(language)))
        if chosen == "exact":
            estimate, draw_values, den, presence = _exact_draws(cells, counts)
        else:
            estimate, influence, presence = _influence_per_model(cells)
            den = presence.sum(axis=2).astype(np.float64)
            flat = influence.reshape(-1, cells.n_prompts).T  # (prompts, models * EFFECTS)
            shifts = ((counts - 1.0) @ flat).reshape(draws, *estimate.shape)
            draw_values = estimate[None] + shifts
        # prompts with the effect: the denominator at weights 1
        n_units = den.astype(np.int64)
        for e, effect in enumerate(EFFECTS):
            members = np.flatnonzero(np.isfinite(estimate[:, e]))
            columns = [draw_values[:, m, e] for m in range(len(model_ids))]
            labels = list(model_ids)
            estimates = list(estimate[:, e])
            units = list(n_units[:, e])
            if members.size:
                macro, macro_draws, macro_units = macro_mean(
                    estimate[members, e], draw_values[:, members, e], presence[members, e].T
                )
                columns.append(macro_draws)
                labels.append(MACRO_MODEL)
                estimates.append(macro)
                units.append(macro_units)
            lo, hi = percentile_interval(np.column_stack(columns), level)
            for k, label in enumerate(labels):
                if not np.isfinite(estimates[k]):
                    continue
                rows.append(
                    {
                        "language": str(language),
                        "model_id": str(label),
                        "effect": effect,
                        "estimate": float(estimates[k]),
                        "ci_lo": _float(lo[k]),
                        "ci_hi": _float(hi[k]),
                        "n_units": int(units[k]),
                        "method": chosen,
                    }
                )
    return rows


COUPLING_INTERVALS_SCHEMA = pa.schema(
    [
        ("language", pa.string()),
        ("model_id", pa.string()),
        ("effect_kind", pa.string()),
        ("effect", pa.string()),
        ("estimate", pa.float64()),
        ("ci_lo", pa.float64()),
        ("ci_hi", pa.float64()),
        ("n_prompts", pa.int64()),
        ("n_draws", pa.int64()),
        ("bootstrap_method", pa.string()),
    ]
)


def coupling_intervals(
    pairs: pa.Table | CouplingInputs,
    records: pa.Table | None = None,
    *,
    draws: int,
    seed: int,
    method: str = "auto",
    exact_budget: int = DEFAULT_EXACT_BUDGET,
) -> pa.Table:
    """int_coupling_intervals: `coupling_bootstrap` as one row per language x model (plus
    `MACRO_MODEL`) x effect, fractions, with effect_kind (`context` or `contrast`), the prompts
    with the effect, the draw count and the bootstrap method used. `pairs`: int_question_pairs;
    `records`: int_question_validity (its native `outcome` is used, never the masked one); or
    `pairs` = their `coupling_inputs`."""
    rows = coupling_bootstrap(
        pairs, records, draws=draws, seed=seed, method=method, exact_budget=exact_budget
    )
    out = {
        "language": [r["language"] for r in rows],
        "model_id": [r["model_id"] for r in rows],
        "effect_kind": ["context" if r["effect"] in CONTEXTS else "contrast" for r in rows],
        "effect": [r["effect"] for r in rows],
        "estimate": [r["estimate"] for r in rows],
        "ci_lo": [r["ci_lo"] for r in rows],
        "ci_hi": [r["ci_hi"] for r in rows],
        "n_prompts": [r["n_units"] for r in rows],
        "n_draws": [draws] * len(rows),
        "bootstrap_method": [r["method"] for r in rows],
    }
    return pa.Table.from_pydict(out, schema=COUPLING_INTERVALS_SCHEMA)


def _affordable_method(cells: _CouplingCells, draws: int, exact_budget: int) -> str:
    """`exact` when evaluating every model x cell in every draw stays within the budget."""
    work = cells.n_models * len(cells.prompt) * draws
    return "exact" if work <= exact_budget else "linearised"


def _exact_draws(cells: _CouplingCells, counts: np.ndarray):
    """Estimate, draws (draws, models, EFFECTS), denominator and presence, marginals redone."""
    presence = np.zeros((cells.n_models, len(EFFECTS), cells.n_prompts), dtype=bool)
    num, den = coupling_draw_sums(cells, np.ones(cells.n_prompts), presence)
    draw_values = np.empty((counts.shape[0], *num.shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
        for b in range(counts.shape[0]):
            d_num, d_den = coupling_draw_sums(cells, counts[b])
            draw_values[b] = np.where(d_den > 0, d_num / np.where(d_den > 0, d_den, 1), np.nan)
    return estimate, draw_values, den, presence
