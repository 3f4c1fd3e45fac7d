"""Root controls (Eq. 6, METHOD 8, Figure 2 right) and the prompt bootstrap behind their intervals.

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

`macro_mean` (the `MACRO_MODEL` row) and `finite_or_none` are shared with the coupling bootstrap
(`method.structure.coupling_draws`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

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
                    "estimate": finite_or_none(estimate[k]),
                    "ci_lo": finite_or_none(lo[k]),
                    "ci_hi": finite_or_none(hi[k]),
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


def finite_or_none(value: float) -> float | None:
    """The value as a float, None where it is NaN or infinite (a null in the marts)."""
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
    # The sums below add a prompt's contexts in row order, and a float sum's last bits depend
    # on the order of its terms: sorted by cell and prompt, then by the values themselves (rows
    # that tie on all of these add the same numbers), so the order the table was written in
    # (which a build does not fix) cannot reach them (docs/importing.md, "Deterministic builds").
    contexts = contexts.sort_by(
        [
            (name, "ascending")
            for name in ("model_id", "language", "prompt_id", "local_survival", "baseline_survival")
        ]
    )
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
