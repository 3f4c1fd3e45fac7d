"""Paired concept bootstrap of HCQ totals (METHOD 11), vectorised.

Every score of Eq. 2 and Eq. 3 is a ratio of sums over prompts, so a bootstrap replicate needs
only per-concept sufficient statistics: for each concept c, model m, language l and capability t
a numerator and a denominator (valid "yes" count and valid count; for the transcription
capability L - D and L, the UTF-16 target length minus edit distance and the length).
Resampling concepts with replacement gives each concept a count w_c (a multinomial draw), and
the replicate's sums are `sum_c w_c * stats_c`: one matrix product `W @ S` for all replicates
at once, with W [draws x concepts] and S [concepts x (model, language, capability, numerator /
denominator)]. Scores and HCQ (`method.hcq`) are then applied per replicate. One W serves every
model and both languages, so the draws are paired: a concept's English and Chinese prompts and
every generator's images of them enter or leave a replicate together. No tensor of size draws x
concepts x models is ever formed; W is produced in chunks of draws.

Conventions (written down because the method is silent):
- Ranks are competition ranks ("1224", like SQL `rank()`): 1 + the number of models with a
  strictly higher total. A model whose total is undefined in a draw gets no rank there.
- Top-1 probability splits ties: a draw in which k models share rank 1 gives each of them 1/k,
  so the probabilities of a scope sum to 1 over the draws that rank any model.
- Rank interval: the 2.5% and 97.5% quantiles of a model's rank over the draws, taken as
  inverse-CDF quantiles (the smallest rank r with P(rank <= r) >= q) so that they are ranks.
- Pairwise interval: linear-interpolation percentiles 2.5 and 97.5 of the per-draw difference.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from method.hcq import hcq_total
from method.rank_correlation import spearman_rho
from method.scores import POINTS, bilingual_mean, capability_score
from method.taxonomy import Taxonomy

BILINGUAL = "bilingual"
# Draws per chunk of the weights matrix: 1,000 x 6,573 concepts is 26 MB of float32.
DRAW_CHUNK = 1000
# float32 holds every integer below 2**24 exactly, so integer sums below it are exact.
_FLOAT32_EXACT = 2**24


@dataclass(frozen=True)
class ConceptStats:
    """Dense per-concept sufficient statistics, numerator and denominator [C, M, L, T]."""

    concept_ids: tuple[str, ...]
    model_ids: tuple[str, ...]
    languages: tuple[str, ...]
    capabilities: tuple[str, ...]
    capability_groups: tuple[str, ...]
    is_transcription: np.ndarray  # [T] bool: Eq. 3 (evaluated as 1 - D / L), else Eq. 2
    numerator: np.ndarray
    denominator: np.ndarray
    bilingual_languages: tuple[str, str] = ("en", "zh")

    @property
    def scopes(self) -> tuple[str, ...]:
        """Each language, then `bilingual` when both bilingual languages are present."""
        if all(lang in self.languages for lang in self.bilingual_languages):
            return (*self.languages, BILINGUAL)
        return self.languages


def encode(values, universe: Sequence[str] | None = None) -> tuple[tuple[str, ...], np.ndarray]:
    """(sorted distinct values or `universe`, each value's index in it). Arrow string arrays are
    dictionary-encoded by Arrow (fast at millions of rows); anything else goes through numpy."""
    if isinstance(values, pa.ChunkedArray | pa.Array):
        encoded = pc.dictionary_encode(values)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()
        distinct = encoded.dictionary.to_pylist()
        indices = encoded.indices.to_numpy(zero_copy_only=False)
    else:
        uniq, indices = np.unique(np.asarray(values).astype(str), return_inverse=True)
        distinct = uniq.tolist()
    universe = tuple(sorted(distinct)) if universe is None else tuple(universe)
    lookup = {v: i for i, v in enumerate(universe)}
    missing = [v for v in distinct if v not in lookup]
    if missing:
        raise ValueError(f"values outside {universe[:5]}...: {missing[:5]}")
    remap = np.array([lookup[v] for v in distinct], dtype=np.int64)
    return universe, remap[np.asarray(indices, dtype=np.int64)]


def concept_stats(
    columns: Mapping[str, Sequence],
    capabilities: Sequence[str],
    capability_groups: Sequence[str],
    transcription_capabilities: Sequence[str] = (),
    masked: bool = True,
    bilingual_languages: Sequence[str] = ("en", "zh"),
) -> ConceptStats:
    """Dense statistics from long rows (one per concept or prompt x model x capability).

    `columns` holds equal-length arrays `concept_id`, `model_id`, `language`, `capability`,
    `score_num`, `score_den` (the one encoding of a score's evidence, as
    `int_prompt_sufficient_stats` emits it: valid yes / valid questions, or L - D / L for the
    capability scored from transcriptions), and for `masked=False` also `n_answered`, `n_yes`:
    the masking-effect view of METHOD 6 (every answered question counted, its native outcome; a
    missing judgment is missing evidence, out of both sums, never a 0; transcription evidence is
    not masked, so it stays). Rows of one concept add up
    (a concept's prompts of one language are summed). Capabilities in
    `transcription_capabilities` are scored by Eq. 3, the others by Eq. 2.
    """
    concepts, c_idx = encode(columns["concept_id"])
    models, m_idx = encode(columns["model_id"])
    languages, l_idx = encode(columns["language"])
    _, t_idx = encode(columns["capability"], capabilities)
    is_text = np.array([t in set(transcription_capabilities) for t in capabilities])
    num, den = np.asarray(columns["score_num"]), np.asarray(columns["score_den"])
    if not masked:
        text_row = is_text[t_idx]
        num = np.where(text_row, num, np.asarray(columns["n_yes"]))
        den = np.where(text_row, den, np.asarray(columns["n_answered"]))
    shape = (len(concepts), len(models), len(languages), len(capabilities))
    flat = np.ravel_multi_index((c_idx, m_idx, l_idx, t_idx), shape)
    size = int(np.prod(shape))
    numerator = np.bincount(flat, weights=num.astype(float), minlength=size).reshape(shape)
    denominator = np.bincount(flat, weights=den.astype(float), minlength=size).reshape(shape)
    return ConceptStats(
        concept_ids=concepts,
        model_ids=models,
        languages=languages,
        capabilities=tuple(capabilities),
        capability_groups=tuple(capability_groups),
        is_transcription=is_text,
        numerator=numerator,
        denominator=denominator,
        bilingual_languages=tuple(bilingual_languages),
    )


def scope_totals(numerator: np.ndarray, denominator: np.ndarray, stats: ConceptStats) -> np.ndarray:
    """HCQ totals [..., M, scopes] from summed statistics [..., M, L, T].

    The bilingual total is the fixed 50/50 mean of the two languages' totals, NaN unless both
    are defined (as in `fct_hcq_leaderboard`).
    """
    # Eq. 2 and Eq. 3, the latter evaluated as 1 - D / L like the leaderboard
    scores = capability_score(numerator, denominator, one_minus_distance=stats.is_transcription)
    per_language = hcq_total(scores, stats.capability_groups)  # [..., M, L]
    if BILINGUAL not in stats.scopes:
        return per_language
    first, second = (stats.languages.index(lang) for lang in stats.bilingual_languages)
    bilingual = bilingual_mean(per_language[..., first], per_language[..., second])
    return np.concatenate([per_language, bilingual[..., None]], axis=-1)


def point_totals(stats: ConceptStats) -> np.ndarray:
    """The observed totals [M, scopes]: every concept counted once."""
    return scope_totals(stats.numerator.sum(axis=0), stats.denominator.sum(axis=0), stats)


def concept_weights(
    n_concepts: int, draws: int, seed: int, chunk: int = DRAW_CHUNK
) -> Iterator[np.ndarray]:
    """Chunks [<= chunk, n_concepts] of the weights matrix W: row b holds how often each concept
    appears in draw b (n_concepts concepts drawn uniformly with replacement, i.e. a
    Multinomial(n_concepts, 1/n_concepts) vector). Deterministic for a given seed and chunk."""
    rng = np.random.default_rng(seed)
    for start in range(0, draws, chunk):
        yield resampling_counts(n_concepts, min(chunk, draws - start), rng)


def rng_for(seed: int, *keys: str) -> np.random.Generator:
    """A reproducible stream per (seed, keys), independent of the order cells are processed in:
    numpy's SeedSequence over [seed, crc32 of each key]. The prompt bootstraps (one stream per
    language) and the simulator (one per world part, model and language) draw from it."""
    return np.random.default_rng([int(seed), *(zlib.crc32(k.encode()) for k in keys)])


def resampling_counts(n_units: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """(draws, n_units) how often each unit is picked when n_units are drawn with replacement."""
    picks = rng.integers(0, n_units, size=(draws, n_units))
    flat = (picks + np.arange(draws)[:, None] * n_units).ravel()
    return np.bincount(flat, minlength=draws * n_units).reshape(draws, n_units).astype(np.float64)


def bootstrap_sums(
    stats: ConceptStats, draws: int, seed: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Replicate sums (numerator, denominator), each [<= DRAW_CHUNK, M, L, T], from W @ S, chunk
    by chunk of draws: the one home of the weights' product, which the totals and the capability
    deficits (`method.deficits`) summarise."""
    n_concepts = len(stats.concept_ids)
    cell_shape = stats.numerator.shape[1:]
    n_cells = int(np.prod(cell_shape))
    matrix = np.concatenate(
        [
            stats.numerator.reshape(n_concepts, n_cells),
            stats.denominator.reshape(n_concepts, n_cells),
        ],
        axis=1,
    )
    # Cells without any evidence stay 0 in every draw: leave them out of the product.
    used = np.flatnonzero(matrix.any(axis=0))
    matrix = matrix[:, used]
    # The statistics are counts and character sums (integers), so a float32 product is exact
    # while every sum stays below 2**24; it runs about twice as fast as float64.
    is_integer = bool(np.all(matrix == np.round(matrix)))
    column_bound = matrix.max(axis=0, initial=0) * n_concepts
    exact32 = is_integer and bool((column_bound < _FLOAT32_EXACT).all())
    matrix = matrix.astype(np.float32 if exact32 else np.float64)
    for weights in concept_weights(n_concepts, draws, seed):
        sums = np.zeros((len(weights), 2 * n_cells))
        sums[:, used] = weights.astype(matrix.dtype) @ matrix
        num = sums[:, :n_cells].reshape(len(weights), *cell_shape)
        den = sums[:, n_cells:].reshape(len(weights), *cell_shape)
        yield num, den


def bootstrap_totals(stats: ConceptStats, draws: int, seed: int) -> np.ndarray:
    """Replicate totals [draws, M, scopes] (`bootstrap_sums`, then Eq. 2/3 and HCQ per draw)."""
    out = np.empty((draws, len(stats.model_ids), len(stats.scopes)))
    start = 0
    for num, den in bootstrap_sums(stats, draws, seed):
        out[start : start + len(num)] = scope_totals(num, den, stats)
        start += len(num)
    return out


# -- summaries of the replicates ------------------------------------------------------------


def competition_ranks(totals: np.ndarray) -> np.ndarray:
    """Ranks along the last axis (1 = highest; ties share the best rank; NaN total -> NaN rank)."""
    totals = np.asarray(totals, dtype=float)
    higher = (totals[..., None, :] > totals[..., :, None]).sum(axis=-1)
    return np.where(np.isnan(totals), np.nan, 1.0 + higher)


def top1_probability(totals: np.ndarray) -> np.ndarray:
    """P(rank 1) per model from replicate totals [draws, M], ties split equally."""
    winners = competition_ranks(totals) == 1
    n_winners = winners.sum(axis=1, keepdims=True)
    ranked = n_winners[:, 0] > 0
    if not ranked.any():
        return np.full(totals.shape[1], np.nan)
    share = winners[ranked] / n_winners[ranked]
    return share.mean(axis=0)


def rank_intervals(totals: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper rank quantiles per model (inverse-CDF, so they are whole ranks)."""
    ranks = competition_ranks(totals)
    tail = (1 - level) / 2
    lo, hi = np.nanquantile(ranks, [tail, 1 - tail], axis=0, method="inverted_cdf")
    return lo, hi


def pairwise_intervals(totals: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval [M, M] of total_a - total_b over the draws (a = row, b = column)."""
    diffs = totals[:, :, None] - totals[:, None, :]
    lo, hi = percentile_interval(diffs.reshape(len(diffs), -1), level)
    return lo.reshape(diffs.shape[1:]), hi.reshape(diffs.shape[1:])


def percentile_interval(
    draws: np.ndarray, level: float = 0.95, tails: tuple[float, float] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column, ignoring draws where the statistic was undefined.

    The quantiles are (1 - level) / 2 and its complement, or `tails` when given: the router's
    interval is published at exactly (0.025, 0.975), which differs from (1 - 0.95) / 2 in the
    last bit and so moves interpolated quantiles.
    """
    alpha, upper = tails or ((1.0 - level) / 2.0, 1 - (1.0 - level) / 2.0)
    lo = np.full(draws.shape[1], np.nan)
    hi = np.full(draws.shape[1], np.nan)
    defined = ~np.all(np.isnan(draws), axis=0)
    if defined.any():
        lo[defined], hi[defined] = np.nanquantile(draws[:, defined], [alpha, upper], axis=0)
    return lo, hi


# -- inputs from the warehouse (dbt Python models pass DuckDB relations' Arrow tables) ----------


# The columns of int_prompt_sufficient_stats that `stats_from_arrow` reads (`masked=False` also
# reads the unmasked counts, and `masking_effect` the missing judgments): a dbt model projects
# them before reading, since at 10x paper scale the whole table is gigabytes of columns nothing
# here uses (bench/RESULTS.md, "10x").
STATS_COLUMNS = ("concept_id", "model_id", "language", "capability", "score_num", "score_den")
UNMASKED_STATS_COLUMNS = (*STATS_COLUMNS, "n_answered", "n_yes", "n_missing")


def columns_from_arrow(table) -> dict:
    """Numeric columns of an Arrow table as numpy arrays; string columns stay Arrow (`encode`)."""
    return {
        name: column.combine_chunks()
        if pa.types.is_string(column.type)
        else column.to_numpy(zero_copy_only=False)
        for name, column in zip(table.column_names, table.columns, strict=True)
    }


def stats_from_arrow(
    stats_table,
    capabilities_table,
    capability_scores_table,
    masked: bool = True,
    bilingual_languages: Sequence[str] = ("en", "zh"),
) -> ConceptStats:
    """ConceptStats from `int_prompt_sufficient_stats`, the taxonomy seed and
    `int_capability_scores` (whose `score_source` says which capability is scored from
    transcriptions: none when the bundle has no OCR and text falls back to judgments)."""
    taxonomy = Taxonomy.from_arrow(capabilities_table)
    capabilities, groups = taxonomy.capabilities, taxonomy.capability_groups
    sources = capability_scores_table.select(["capability", "score_source"]).to_pylist()
    transcription = sorted(
        {r["capability"] for r in sources if r["score_source"] == "transcription"}
    )
    return concept_stats(
        columns_from_arrow(stats_table),
        capabilities,
        groups,
        transcription,
        masked=masked,
        bilingual_languages=bilingual_languages,
    )


def totals_from_draws(table) -> tuple[tuple[str, ...], tuple[str, ...], np.ndarray]:
    """(scopes, models, totals [1 + draws, M, scopes]) from the long `int_reliability_draws`
    table (draw 0 = observed); missing cells and null totals are NaN."""
    cols = columns_from_arrow(table)
    scopes, s_idx = encode(cols["language_scope"])
    models, m_idx = encode(cols["model_id"])
    draw = cols["draw_index"].astype(np.int64)
    totals = np.full((int(draw.max()) + 1, len(models), len(scopes)), np.nan)
    values = table.column("hcq_total_frac").to_numpy(zero_copy_only=False)
    totals[draw, m_idx, s_idx] = np.asarray(values, dtype=float)
    return scopes, models, totals


# -- the reliability tables (METHOD 6, 11): what the dbt models int_* return -------------------


def reliability_draws(
    stats_table,
    capabilities_table,
    capability_scores_table,
    *,
    draws: int,
    seed: int,
    bilingual_languages: Sequence[str] = ("en", "zh"),
) -> pa.Table:
    """int_reliability_draws: HCQ totals (fraction) per draw x scope x model. Draw 0 is the
    observed sample (every concept once), draws 1..`draws` the paired concept bootstrap
    (`bootstrap_totals`); a total undefined in a draw is null. Inputs as `stats_from_arrow`."""
    stats = stats_from_arrow(
        stats_table,
        capabilities_table,
        capability_scores_table,
        bilingual_languages=bilingual_languages,
    )
    totals = np.concatenate(
        [point_totals(stats)[None], bootstrap_totals(stats, draws, seed)]
    )  # [1 + draws, models, scopes]
    draw_index, model_index, scope_index = np.indices(totals.shape).reshape(3, -1)
    return pa.table(
        {
            "draw_index": pa.array(draw_index, pa.int32()),
            "language_scope": pa.array(np.array(stats.scopes)[scope_index], pa.string()),
            "model_id": pa.array(np.array(stats.model_ids)[model_index], pa.string()),
            "hcq_total_frac": pa.array(totals.ravel(), pa.float64(), mask=np.isnan(totals.ravel())),
        }
    )


RANK_RELIABILITY_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("language_scope", pa.string()),
        ("hcq_total", pa.float64()),
        ("hcq_total_frac", pa.float64()),
        ("rank", pa.int64()),
        ("top1_prob", pa.float64()),
        ("rank_lo", pa.int64()),
        ("rank_hi", pa.int64()),
        ("n_draws", pa.int64()),
    ]
)


def rank_reliability(draws_table) -> pa.Table:
    """fct_rank_reliability, one row per model x scope: the observed total (points and fraction)
    and competition rank beside the top-1 probability (ties split) and the 95% inverse-CDF rank
    interval over the replicates of `int_reliability_draws` (`draws_table`), and the number of
    draws in which the model's total is defined."""
    scopes, models, totals = totals_from_draws(draws_table)
    rows = []
    for s, scope in enumerate(scopes):
        point, draws = totals[0, :, s], totals[1:, :, s]
        rank = competition_ranks(point)
        top1 = top1_probability(draws)
        rank_lo, rank_hi = rank_intervals(draws)
        for m, model_id in enumerate(models):
            defined = not np.isnan(point[m])
            rows.append(
                {
                    "model_id": model_id,
                    "language_scope": scope,
                    "hcq_total": POINTS * point[m] if defined else None,
                    "hcq_total_frac": point[m] if defined else None,
                    "rank": int(rank[m]) if defined else None,
                    "top1_prob": float(top1[m]),
                    "rank_lo": int(rank_lo[m]) if not np.isnan(rank_lo[m]) else None,
                    "rank_hi": int(rank_hi[m]) if not np.isnan(rank_hi[m]) else None,
                    "n_draws": int((~np.isnan(draws[:, m])).sum()),
                }
            )
    return pa.Table.from_pylist(rows, schema=RANK_RELIABILITY_SCHEMA)


PAIRWISE_RELIABILITY_SCHEMA = pa.schema(
    [
        ("language_scope", pa.string()),
        ("model_a", pa.string()),
        ("model_b", pa.string()),
        ("diff", pa.float64()),
        ("ci_lo", pa.float64()),
        ("ci_hi", pa.float64()),
        ("excludes_zero", pa.bool_()),
        ("n_draws", pa.int64()),
    ]
)


def pairwise_reliability(draws_table) -> pa.Table:
    """fct_pairwise_reliability, one row per scope x ordered pair of models with defined totals:
    diff = total(a) - total(b) in points, its 95% percentile interval over the replicates of
    `int_reliability_draws` (`pairwise_intervals`), whether it excludes zero, and the number of
    draws in which the difference is defined. (b, a) mirrors (a, b)."""
    scopes, models, totals = totals_from_draws(draws_table)
    rows = []
    for s, scope in enumerate(scopes):
        point, draws = totals[0, :, s], totals[1:, :, s]
        lo, hi = pairwise_intervals(draws)
        for a, model_a in enumerate(models):
            for b, model_b in enumerate(models):
                if a == b or np.isnan(point[a]) or np.isnan(point[b]):
                    continue
                rows.append(
                    {
                        "language_scope": scope,
                        "model_a": model_a,
                        "model_b": model_b,
                        "diff": POINTS * (point[a] - point[b]),
                        "ci_lo": POINTS * lo[a, b],
                        "ci_hi": POINTS * hi[a, b],
                        "excludes_zero": bool(lo[a, b] > 0 or hi[a, b] < 0),
                        "n_draws": int((~np.isnan(draws[:, a] - draws[:, b])).sum()),
                    }
                )
    return pa.Table.from_pylist(rows, schema=PAIRWISE_RELIABILITY_SCHEMA)


MASKING_EFFECT_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("language_scope", pa.string()),
        ("hcq_masked", pa.float64()),
        ("hcq_unmasked", pa.float64()),
        ("rank_masked", pa.int64()),
        ("rank_unmasked", pa.int64()),
        ("rank_shift", pa.int64()),
        ("has_moved", pa.bool_()),
        ("spearman_rho", pa.float64()),
        ("n_missing_judgments", pa.int64()),
    ]
)


def missing_judgments(
    stats_table,
    model_ids: Sequence[str],
    scopes: Sequence[str],
    bilingual_languages: Sequence[str],
) -> np.ndarray:
    """[M, scopes] the judgments each model lacks (`n_missing` of int_prompt_sufficient_stats:
    null answers and absent rows alike) over the scope's languages: METHOD 6 reports them beside
    the totals they stay out of."""
    cols = columns_from_arrow(stats_table.select(["model_id", "language", "n_missing"]))
    _, m_idx = encode(cols["model_id"], model_ids)
    languages, l_idx = encode(cols["language"])
    missing = np.asarray(cols["n_missing"], dtype=float)
    out = np.zeros((len(model_ids), len(scopes)), dtype=np.int64)
    for s, scope in enumerate(scopes):
        in_scope = bilingual_languages if scope == BILINGUAL else (scope,)
        rows = np.isin(l_idx, [languages.index(lang) for lang in in_scope if lang in languages])
        counts = np.bincount(m_idx[rows], weights=missing[rows], minlength=len(model_ids))
        out[:, s] = np.rint(counts).astype(np.int64)
    return out


def masking_effect(
    stats_table,
    capabilities_table,
    capability_scores_table,
    bilingual_languages: Sequence[str] = ("en", "zh"),
) -> pa.Table:
    """fct_masking_effect (METHOD 6), one row per model x scope: the official (masked) HCQ total
    beside the total with every question counted (`concept_stats(masked=False)`) in points, the
    competition rank under each among the models with both totals, the shift (unmasked -
    masked), whether it moved, the scope's Spearman correlation of the two totals (more than
    two models needed), and the model's missing judgments in the scope, which neither total
    counts (METHOD 6). Inputs as `stats_from_arrow`, the stats with the unmasked columns."""
    inputs = (stats_table, capabilities_table, capability_scores_table)
    masked = stats_from_arrow(*inputs, masked=True, bilingual_languages=bilingual_languages)
    unmasked = stats_from_arrow(*inputs, masked=False, bilingual_languages=bilingual_languages)
    totals_masked, totals_unmasked = point_totals(masked), point_totals(unmasked)
    n_missing = missing_judgments(stats_table, masked.model_ids, masked.scopes, bilingual_languages)
    rows = []
    for s, scope in enumerate(masked.scopes):
        a, b = totals_masked[:, s], totals_unmasked[:, s]
        both = ~np.isnan(a) & ~np.isnan(b)
        rank_a, rank_b = (
            competition_ranks(np.where(both, a, np.nan)),
            competition_ranks(np.where(both, b, np.nan)),
        )
        rho = spearman_rho(a[both], b[both]) if both.sum() > 2 else None
        for m, model_id in enumerate(masked.model_ids):
            rows.append(
                {
                    "model_id": model_id,
                    "language_scope": scope,
                    "hcq_masked": POINTS * a[m] if not np.isnan(a[m]) else None,
                    "hcq_unmasked": POINTS * b[m] if not np.isnan(b[m]) else None,
                    "rank_masked": int(rank_a[m]) if both[m] else None,
                    "rank_unmasked": int(rank_b[m]) if both[m] else None,
                    "rank_shift": int(rank_b[m] - rank_a[m]) if both[m] else None,
                    "has_moved": bool(rank_a[m] != rank_b[m]) if both[m] else None,
                    "spearman_rho": rho,
                    "n_missing_judgments": int(n_missing[m, s]),
                }
            )
    return pa.Table.from_pylist(rows, schema=MASKING_EFFECT_SCHEMA)
