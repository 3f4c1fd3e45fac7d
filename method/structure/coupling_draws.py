"""Coupling bootstrap (METHOD 9): Delta and Gamma (Eq. 7-8) with prompt-bootstrap intervals.

The marginals of Delta pool the other prompts of a stratum, and their noise, shared by every
prompt of the stratum, is a large part of Gamma's uncertainty where strata are rare, so every
draw carries it: recomputed exactly (`coupling_draw_sums`), or to first order
(`coupling_influence`; `coupling_bootstrap` says when each is used).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa

from method.bootstrap import encode, percentile_interval, resampling_counts, rng_for
from method.structure.coupling import (
    CONTEXTS,
    CONTRASTED_CONTEXTS,
    CONTRASTS,
    DISC,
    CouplingInputs,
    TableSource,
    as_inputs,
    dense_codes,
)
from method.structure.roots import MACRO_MODEL, finite_or_none, macro_mean


class CouplingCells:
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

    def of_model(self, m: int) -> CouplingCells:
        """The same cells with model `m`'s sums only (models never mix in the estimators)."""
        one = slice(m, m + 1)
        return CouplingCells(
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


def coupling_cells(outcomes, pair_q1, pair_q2, pair_prompt, pair_context, pair_stratum):
    """Cells of ONE language (prompt codes dense 0..P-1), per-model sums on native outcomes."""
    cell, first = dense_codes(pair_prompt, pair_context, pair_stratum)
    n_cells = len(first)
    group, _ = dense_codes(pair_context[first], pair_stratum[first])
    prompt_stratum, _ = dense_codes(pair_prompt[first], pair_stratum[first])
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
    return CouplingCells(
        pair_prompt[first],
        pair_context[first],
        group,
        prompt_stratum,
        *sums,
        int(pair_prompt.max()) + 1,
    )


EFFECTS = CONTEXTS + CONTRASTS


def coupling_draw_sums(
    cells: CouplingCells, weights: np.ndarray, presence: np.ndarray | None = None
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
    is_disc = defined & (context == DISC)[None, :]
    rows, cols = np.nonzero(is_disc)
    disc_delta[rows, prompt_stratum[cols]] = delta[rows, cols]
    matched = disc_delta[:, prompt_stratum]
    contrast_of = np.full(len(CONTEXTS), -1)
    for k, c in zip(CONTRASTED_CONTEXTS, CONTRASTS, strict=True):
        contrast_of[CONTEXTS.index(k)] = EFFECTS.index(c)
    in_contrast = defined & (contrast_of[context] >= 0)[None, :] & ~np.isnan(matched)
    add_means(contrast_of[context], in_contrast, delta - np.where(np.isnan(matched), 0, matched))
    return numerator, denominator


def coupling_influence(cells: CouplingCells) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    scatter = _CellScatter(cells)
    lin = _linearisation(cells, scatter)
    estimate = np.full((m_count, len(EFFECTS)), np.nan)
    influence = np.zeros((m_count, len(EFFECTS), n_prompts))
    presence = np.zeros((m_count, len(EFFECTS), n_prompts), dtype=bool)
    for e, effect in enumerate(EFFECTS):
        estimate[:, e], influence[:, e], presence[:, e] = _effect_influence(
            cells, scatter, lin, effect
        )
    return estimate, influence, presence


class _CellScatter:
    """Sums of (models, cells) values over one language's cells: per marginal group less the
    cell itself (`group_others`), and per prompt (`per_prompt`), as `coupling_influence` needs."""

    def __init__(self, cells: CouplingCells):
        self.cells = cells
        model = np.arange(cells.n_models)[:, None]
        self.flat_group = (model * cells.n_groups + cells.group[None, :]).ravel()
        self.flat_prompt = (model * cells.n_prompts + cells.prompt[None, :]).ravel()

    def group_others(self, values: np.ndarray) -> np.ndarray:
        """(models, cells): the group total less the cell itself."""
        m_count, n_groups = self.cells.n_models, self.cells.n_groups
        totals = np.bincount(self.flat_group, values.ravel(), m_count * n_groups)
        return totals.reshape(m_count, n_groups)[:, self.cells.group] - values

    def per_prompt(self, values: np.ndarray) -> np.ndarray:
        """(models, cells) -> (models, prompts)."""
        m_count, n_prompts = self.cells.n_models, self.cells.n_prompts
        return np.bincount(self.flat_prompt, values.ravel(), m_count * n_prompts).reshape(
            m_count, n_prompts
        )


class _Linearisation(NamedTuple):
    """The full-sample cell terms `coupling_influence` expands around (w = 1)."""

    defined: np.ndarray  # (models, cells): cells with a Delta (held at the sample's set)
    delta: np.ndarray  # (models, cells), 0 where undefined
    # d Delta_c / d w_p = -(u_c a1_p + v_c a2_p - z_c n_p) for p's cell in c's group
    u: np.ndarray
    v: np.ndarray
    z: np.ndarray
    matched: np.ndarray  # (cells,) the prompt's disc cell of the same stratum, -1 if none
    has_match: np.ndarray
    matched_safe: np.ndarray  # `matched` with 0 for none, to index with


def _linearisation(cells: CouplingCells, scatter: _CellScatter) -> _Linearisation:
    """Delta of every cell at w = 1 with its leave-one-prompt-out marginals, the coefficients of
    its derivative in another prompt's weight, and each cell's matched disc cell."""
    n, s1, s2 = cells.n, cells.s1, cells.s2
    n_other = scatter.group_others(n)
    defined = (n > 0) & (n_other > 0)
    safe = np.where(defined, n_other, 1.0)
    pi1 = np.where(defined, scatter.group_others(s1) / safe, 0.0)
    pi2 = np.where(defined, scatter.group_others(s2) / safe, 0.0)
    delta = np.where(defined, cells.joint - pi1 * pi2, 0.0)
    # d Delta_c / d w_p = -(u_c a1_p + v_c a2_p - z_c n_p) for p's cell in c's group, p != prompt(c)
    u, v, z = pi2 / safe, pi1 / safe, 2.0 * pi1 * pi2 / safe

    disc_cell = np.full(cells.n_prompt_strata, -1)
    is_disc_cell = cells.context == DISC
    disc_cell[cells.prompt_stratum[is_disc_cell]] = np.flatnonzero(is_disc_cell)
    matched = disc_cell[cells.prompt_stratum]
    has_match = matched >= 0
    matched_safe = np.where(has_match, matched, 0)
    return _Linearisation(defined, delta, u, v, z, matched, has_match, matched_safe)


def _effect_cells(
    cells: CouplingCells, lin: _Linearisation, effect: str
) -> tuple[np.ndarray, np.ndarray]:
    """(models, cells) the cells that enter `effect` and the value each contributes: Delta for a
    context, Delta_k - Delta_disc of the matched disc cell for a contrast."""
    if effect in CONTEXTS:
        mask = lin.defined & (cells.context == CONTEXTS.index(effect))[None, :]
        return mask, lin.delta
    k = CONTEXTS.index(CONTRASTED_CONTEXTS[CONTRASTS.index(effect)])
    matched = lin.matched_safe
    mask = lin.defined & ((cells.context == k) & lin.has_match)[None, :] & lin.defined[:, matched]
    return mask, lin.delta - lin.delta[:, matched]


def _effect_influence(
    cells: CouplingCells, scatter: _CellScatter, lin: _Linearisation, effect: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One effect's estimate (models,), influence (models, prompts) and presence (models,
    prompts): the three parts of `coupling_influence`'s docstring."""
    mask, values = _effect_cells(cells, lin, effect)
    count = scatter.per_prompt(mask.astype(np.float64))
    present = count > 0
    inv_count = np.where(present, 1.0 / np.where(present, count, 1.0), 0.0)
    weight = np.where(mask, inv_count[:, cells.prompt], 0.0)  # coef of the cell's own Delta
    term = scatter.per_prompt(weight * values)
    coef = weight.copy()
    if effect in CONTRASTS:  # the matched disc cell enters with the opposite sign
        rows, cols = np.nonzero(mask)
        np.subtract.at(coef, (rows, lin.matched[cols]), weight[rows, cols])
    n_with = present.sum(axis=1).astype(np.float64)
    ok = n_with > 0
    denominator = np.where(ok, n_with, 1.0)
    theta = np.where(ok, term.sum(axis=1) / denominator, np.nan)
    cross = -(
        cells.s1 * scatter.group_others(coef * lin.u)
        + cells.s2 * scatter.group_others(coef * lin.v)
        - cells.n * scatter.group_others(coef * lin.z)
    )
    own = np.where(present, term - np.where(ok, theta, 0.0)[:, None], 0.0)
    influence = np.where(ok[:, None], (own + scatter.per_prompt(cross)) / denominator[:, None], 0)
    return theta, influence, present


def _influence_per_model(cells: CouplingCells):
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
    pairs: TableSource | CouplingInputs,
    records: TableSource | None = None,
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
    w = 1 with the influence of `coupling_influence`; one matrix product per model gives all its
    draws. It leaves out the second-order terms and the draws in which a stratum loses its Delta,
    both of which come from strata seen in few prompts: in small worlds, where many strata are
    rare, its intervals are 2-7% narrower than the exact ones and under-cover (docs/marts.md,
    Structural diagnostics); at paper scale, where almost every cell's stratum spans dozens of
    prompts, the two agree.
    `method="auto"`: exact for a language whose models x cells x draws is at most
    `exact_budget`, linearised above it (exact there would take minutes to an hour).
    `pairs` and `records` as for `coupling_prompt_effects` (or `pairs` = their
    `coupling_inputs`). Returns dicts: language, model_id, effect (a context or a contrast),
    estimate, ci_lo, ci_hi (fractions), n_units (prompts with the effect), method (`exact` or
    `linearised`). The two halves, each model's draws (`coupling_model_draws`) and the intervals
    with the macro mean from them (`coupling_intervals_from_draws`), are int_coupling_draws and
    int_coupling_intervals.
    """
    model_draws = coupling_model_draws(
        pairs, records, draws=draws, seed=seed, method=method, exact_budget=exact_budget
    )
    return _interval_rows(model_draws, level)


# One row per language x model x effect with an estimate: each model's share of
# int_coupling_intervals, kept per generator (int_coupling_draws) so that an incremental build
# computes only the generators it rebuilds. `n_units`: prompts with the effect; `draw_values`:
# the effect in each draw (NaN where undefined); `presence`: `np.packbits` over the language's
# prompts (in sorted id order) of where the model has the effect, for the macro mean's count;
# `language_prompts`: how many prompts the language's resamples draw from.
MODEL_DRAWS_SCHEMA = pa.schema(
    [
        ("language", pa.string()),
        ("model_id", pa.string()),
        ("effect", pa.string()),
        ("estimate", pa.float64()),
        ("n_units", pa.int64()),
        ("draw_values", pa.list_(pa.float64())),
        ("presence", pa.binary()),
        ("language_prompts", pa.int64()),
        ("bootstrap_method", pa.string()),
    ]
)


def coupling_model_draws(
    pairs: TableSource | CouplingInputs,
    records: TableSource | None = None,
    *,
    draws: int,
    seed: int,
    method: str = "auto",
    exact_budget: int = DEFAULT_EXACT_BUDGET,
    n_models: int | None = None,
) -> pa.Table:
    """Each model's estimate and bootstrap draws of every effect (`coupling_bootstrap`'s
    method), one `MODEL_DRAWS_SCHEMA` row per language x model x effect with an estimate.

    A model's rows depend on its own records, the language's resamples and the method only, so
    they are the same whichever other models are in the call. `n_models`: how many models the
    warehouse holds, which `auto`'s budget counts (default: the records' models); an incremental
    build hands over the rebuilt generators' records with the whole warehouse's count.
    """
    if draws < 1:
        raise ValueError(f"draws must be >= 1, got {draws}")
    if method not in COUPLING_METHODS:
        raise ValueError(f"method must be one of {COUPLING_METHODS}, got {method!r}")
    inputs = as_inputs(pairs, records)
    n_models = len(inputs.model_ids) if n_models is None else n_models
    languages, pair_language = inputs.codes["language"]
    parts = [MODEL_DRAWS_SCHEMA.empty_table()]
    for lang_code, language in enumerate(languages):
        sel = np.flatnonzero(pair_language == lang_code)
        if sel.size == 0:
            continue
        cells = _language_cells(inputs, sel)
        chosen = _chosen_method(method, n_models, len(cells.prompt), draws, exact_budget)
        counts = resampling_counts(cells.n_prompts, draws, rng_for(seed, str(language)))
        language_draws = _exact_draws if chosen == "exact" else _linearised_draws
        estimate, draw_values, den, presence = language_draws(cells, counts)
        parts.append(
            _model_draw_rows(
                str(language), inputs.model_ids, estimate, draw_values, den, presence, chosen
            )
        )
    return pa.concat_tables(parts)


def _model_draw_rows(
    language: str,
    model_ids: np.ndarray,
    estimate: np.ndarray,
    draw_values: np.ndarray,
    den: np.ndarray,
    presence: np.ndarray,
    method: str,
) -> pa.Table:
    """One language's `MODEL_DRAWS_SCHEMA` rows: every model x effect with an estimate."""
    models, effects = np.nonzero(np.isfinite(estimate))
    return pa.table(
        {
            "language": [language] * len(models),
            "model_id": [str(model_ids[m]) for m in models],
            "effect": [EFFECTS[e] for e in effects],
            "estimate": estimate[models, effects],
            # prompts with the effect: the denominator at weights 1
            "n_units": den[models, effects].astype(np.int64),
            "draw_values": [draw_values[:, m, e] for m, e in zip(models, effects, strict=True)],
            "presence": [
                np.packbits(presence[m, e]).tobytes() for m, e in zip(models, effects, strict=True)
            ],
            "language_prompts": [presence.shape[2]] * len(models),
            "bootstrap_method": [method] * len(models),
        },
        schema=MODEL_DRAWS_SCHEMA,
    )


def reusable_model_draws(
    stored: pa.Table,
    pairs: pa.Table,
    *,
    n_models: int,
    draws: int,
    method: str = "auto",
    exact_budget: int = DEFAULT_EXACT_BUDGET,
) -> bool:
    """Whether stored `coupling_model_draws` rows hold for a warehouse of `n_models` models: in
    each of their languages, the method `coupling_model_draws` would choose now and the number
    of prompts resampled are those the rows were drawn with (adding a generator can move a
    language across `auto`'s budget, and then every model's draws change)."""
    plan = _language_plans(pairs, n_models, draws, method, exact_budget)
    drawn = zip(
        stored.column("language").to_pylist(),
        stored.column("bootstrap_method").to_pylist(),
        stored.column("language_prompts").to_pylist(),
        strict=True,
    )
    return all(plan.get(language) == (how, n) for language, how, n in set(drawn))


def _language_plans(
    pairs: pa.Table, n_models: int, draws: int, method: str, exact_budget: int
) -> dict[str, tuple[str, int]]:
    """Per language of int_question_pairs: (the method `coupling_model_draws` chooses, the
    number of prompts it resamples)."""
    languages, pair_language = encode(pairs["language"])
    _, prompt = encode(pairs["prompt_id"])
    _, context = encode(pairs["context"])
    _, stratum = encode(pairs["stratum_key"])
    plans = {}
    for lang_code, language in enumerate(languages):
        sel = np.flatnonzero(pair_language == lang_code)
        if sel.size == 0:
            continue
        _, cells = dense_codes(prompt[sel], context[sel], stratum[sel])
        chosen = _chosen_method(method, n_models, len(cells), draws, exact_budget)
        plans[language] = (chosen, len(np.unique(prompt[sel])))
    return plans


def coupling_intervals_from_draws(model_draws: pa.Table, level: float = 0.95) -> pa.Table:
    """int_coupling_intervals from int_coupling_draws (`coupling_model_draws`): per language x
    model x effect the estimate with its percentile interval over the draws, and per language x
    effect the `MACRO_MODEL` mean over the models with the effect; with effect_kind (`context` or
    `contrast`), the prompts with the effect, the draw count and the bootstrap method used."""
    rows = _interval_rows(model_draws, level)
    out = {
        "language": [r["language"] for r in rows],
        "model_id": [r["model_id"] for r in rows],
        "effect_kind": ["context" if r["effect"] in CONTEXTS else "contrast" for r in rows],
        "effect": [r["effect"] for r in rows],
        "estimate": [r["estimate"] for r in rows],
        "ci_lo": [r["ci_lo"] for r in rows],
        "ci_hi": [r["ci_hi"] for r in rows],
        "n_prompts": [r["n_units"] for r in rows],
        "n_draws": [r["n_draws"] for r in rows],
        "bootstrap_method": [r["method"] for r in rows],
    }
    return pa.Table.from_pydict(out, schema=COUPLING_INTERVALS_SCHEMA)


def _interval_rows(model_draws: pa.Table, level: float) -> list[dict]:
    """`coupling_bootstrap`'s rows from the models' draws: per language (sorted), per effect (in
    `EFFECTS` order), every model with the effect (sorted by id), then the `MACRO_MODEL` mean
    over them, each with its percentile interval over the draws. The rows may come in any
    order (an incremental build stores a rebuilt generator's last)."""
    by_cell: dict[tuple[str, str], list[dict]] = {}
    for row in model_draws.to_pylist():
        by_cell.setdefault((row["language"], row["effect"]), []).append(row)
    rows: list[dict] = []
    for language in sorted({language for language, _ in by_cell}):
        for effect in EFFECTS:
            members = sorted(by_cell.get((language, effect), []), key=lambda r: r["model_id"])
            if members:
                rows += _cell_rows(language, effect, members, level)
    return rows


def _cell_rows(language: str, effect: str, members: list[dict], level: float) -> list[dict]:
    """One language x effect: each member model's row and the macro mean's."""
    n_prompts = members[0]["language_prompts"]
    estimates = np.array([m["estimate"] for m in members])
    member_draws = np.column_stack([np.array(m["draw_values"], dtype=np.float64) for m in members])
    present = np.column_stack(
        [np.unpackbits(np.frombuffer(m["presence"], np.uint8), count=n_prompts) for m in members]
    ).astype(bool)
    macro, macro_draws, macro_units = macro_mean(estimates, member_draws, present)
    lo, hi = percentile_interval(np.column_stack([member_draws, macro_draws]), level)
    labels = [m["model_id"] for m in members] + [MACRO_MODEL]
    values = [*estimates, macro]
    units = [m["n_units"] for m in members] + [macro_units]
    return [
        {
            "language": language,
            "model_id": str(label),
            "effect": effect,
            "estimate": float(values[k]),
            "ci_lo": finite_or_none(lo[k]),
            "ci_hi": finite_or_none(hi[k]),
            "n_units": int(units[k]),
            "n_draws": member_draws.shape[0],
            "method": members[0]["bootstrap_method"],
        }
        for k, label in enumerate(labels)
    ]


def _language_cells(inputs: CouplingInputs, sel: np.ndarray) -> CouplingCells:
    """The cells of the pairs `sel` (one language's), its prompts coded 0..P-1."""
    outcomes, _, endpoints, codes = inputs
    _, prompt_local = np.unique(codes["prompt"][1][sel], return_inverse=True)
    return coupling_cells(
        outcomes,
        endpoints[0][sel],
        endpoints[1][sel],
        prompt_local,
        codes["context"][sel],
        codes["stratum"][sel],
    )


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
    pairs: TableSource | CouplingInputs,
    records: TableSource | None = None,
    *,
    draws: int,
    seed: int,
    method: str = "auto",
    exact_budget: int = DEFAULT_EXACT_BUDGET,
) -> pa.Table:
    """`coupling_bootstrap` as int_coupling_intervals' table: one row per language x model (plus
    `MACRO_MODEL`) x effect, fractions (`coupling_intervals_from_draws`). `pairs`:
    int_question_pairs; `records`: int_question_validity (its native `outcome` is used, never
    the masked one); or `pairs` = their `coupling_inputs`."""
    model_draws = coupling_model_draws(
        pairs, records, draws=draws, seed=seed, method=method, exact_budget=exact_budget
    )
    return coupling_intervals_from_draws(model_draws)


def _chosen_method(method: str, n_models: int, n_cells: int, draws: int, exact_budget: int) -> str:
    """The method a language's draws are evaluated with: `method`, or for `auto` the affordable
    one."""
    return (
        method if method != "auto" else _affordable_method(n_models, n_cells, draws, exact_budget)
    )


def _affordable_method(n_models: int, n_cells: int, draws: int, exact_budget: int) -> str:
    """`exact` when evaluating every model x cell in every draw stays within the budget."""
    work = n_models * n_cells * draws
    return "exact" if work <= exact_budget else "linearised"


def _exact_draws(cells: CouplingCells, counts: np.ndarray):
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


def _linearised_draws(cells: CouplingCells, counts: np.ndarray):
    """Estimate, draws (draws, models, EFFECTS), denominator and presence, to first order: each
    draw is theta + (w - 1) @ IF with the influence of `coupling_influence`."""
    estimate, influence, presence = _influence_per_model(cells)
    den = presence.sum(axis=2).astype(np.float64)
    # one product per model, (draws, prompts) @ (prompts, EFFECTS): a model's draws must not
    # depend on which other models are in the call (an incremental build draws only the rebuilt
    # generators'), and one product over all models' columns need not add in the same order
    centred = counts - 1.0
    shifts = np.stack([centred @ influence[m].T for m in range(cells.n_models)], axis=1)
    return estimate, estimate[None] + shifts, den, presence
