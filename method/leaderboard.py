"""The HCQ leaderboard (METHOD 3-4) from sufficient statistics, in numpy: the per-judge
leaderboard's rows for judges other than the official one (whose rows are `fct_hcq_leaderboard`
itself).

Same semantics as `fct_hcq_leaderboard`, built from the numpy twins of its macros
(`method.scores.capability_score`, `method.hcq`; tests/marts/test_formula_parity.py holds the
pairs equal): per model and scope (each language, `pooled`, and `bilingual` when both bilingual
languages have prompts) the Eq. 2/3 capability scores from summed `score_num` / `score_den`, the
group views and total of Eq. 4, points and fraction, competition rank within the scope, and how
many groups and capabilities the total used. `bilingual` is the 50/50 mean of the two languages'
group views and totals; its capability count is the smaller of the two.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from method.bootstrap import columns_from_arrow, competition_ranks, encode
from method.hcq import hcq_group_views, hcq_total
from method.scores import POINTS, bilingual_mean, capability_score
from method.taxonomy import Taxonomy

POOLED = "pooled"
BILINGUAL = "bilingual"


def leaderboard_schema(groups: Sequence[str]) -> pa.Schema:
    return pa.schema(
        [
            ("judge_id", pa.string()),
            ("model_id", pa.string()),
            ("language_scope", pa.string()),
            ("hcq_total", pa.float64()),
            *((group, pa.float64()) for group in groups),
            ("rank", pa.int64()),
            ("n_groups", pa.int64()),
            ("n_capabilities", pa.int64()),
            ("hcq_total_frac", pa.float64()),
            ("text_evidence", pa.string()),
        ]
    )


def leaderboards_by_judge(
    stats_table,
    capabilities_table,
    score_sources_table,
    languages_table,
    bilingual_languages: Sequence[str] = ("en", "zh"),
) -> pa.Table:
    """One leaderboard per judge of `stats_table` (rows `judge_id`, `model_id`, `language`,
    `capability`, `score_num`, `score_den`, e.g. `int_judge_prompt_stats`), scoped over the
    `language` values of `languages_table` (the warehouse's prompts). `score_sources_table` is
    `int_capability_score_sources` (which capability is scored from transcriptions)."""
    taxonomy = Taxonomy.from_arrow(capabilities_table)
    sources = dict(
        zip(
            *score_sources_table.select(["capability", "score_source"]).to_pydict().values(),
            strict=True,
        )
    )
    is_text = np.array([sources.get(c) == "transcription" for c in taxonomy.capabilities])
    text_evidence = "transcription" if is_text.any() else "judgment"
    languages = tuple(sorted(set(languages_table.column("language").to_pylist())))
    columns = columns_from_arrow(stats_table)
    judges, j_idx = encode(columns["judge_id"])
    rows: list[dict] = []
    for j, judge_id in enumerate(judges):
        mine = np.flatnonzero(j_idx == j)
        picked = {name: _take(values, mine) for name, values in columns.items()}
        rows += _judge_rows(judge_id, picked, taxonomy, is_text, languages, bilingual_languages)
    for row in rows:
        row["text_evidence"] = text_evidence
    return pa.Table.from_pylist(rows, schema=leaderboard_schema(taxonomy.groups))


def _take(values, index: np.ndarray):
    return values.take(pa.array(index)) if isinstance(values, pa.Array) else values[index]


def _judge_rows(judge_id, columns, taxonomy, is_text, languages, bilingual_languages):
    models, m_idx = encode(columns["model_id"])
    _, l_idx = encode(columns["language"], languages)
    _, t_idx = encode(columns["capability"], taxonomy.capabilities)
    shape = (len(models), len(languages), len(taxonomy.capabilities))
    flat = np.ravel_multi_index((m_idx, l_idx, t_idx), shape)
    size = int(np.prod(shape))
    num, den = (
        np.bincount(flat, weights=np.asarray(columns[name], float), minlength=size).reshape(shape)
        for name in ("score_num", "score_den")
    )
    scopes = (*languages, POOLED)
    num = np.concatenate([num, num.sum(axis=1, keepdims=True)], axis=1)  # [M, S, T]
    den = np.concatenate([den, den.sum(axis=1, keepdims=True)], axis=1)
    scores = capability_score(num, den, one_minus_distance=is_text)
    groups, views = hcq_group_views(scores, taxonomy.capability_groups)  # [M, S, G]
    totals = hcq_total(scores, taxonomy.capability_groups)  # [M, S]
    n_capabilities = (~np.isnan(scores)).sum(axis=-1)
    if all(language in languages for language in bilingual_languages):
        first, second = (languages.index(language) for language in bilingual_languages)
        scopes = (*scopes, BILINGUAL)
        views = np.concatenate(
            [views, bilingual_mean(views[:, first], views[:, second])[:, None]], axis=1
        )
        totals = np.concatenate(
            [totals, bilingual_mean(totals[:, first], totals[:, second])[:, None]], axis=1
        )
        smaller = np.minimum(n_capabilities[:, first], n_capabilities[:, second])
        n_capabilities = np.concatenate([n_capabilities, smaller[:, None]], axis=1)
    n_groups = (~np.isnan(views)).sum(axis=-1)
    ranks = competition_ranks(totals.T).T  # within each scope
    rows = []
    for m, model_id in enumerate(models):
        for s, scope in enumerate(scopes):
            defined = not np.isnan(totals[m, s])
            rows.append(
                {
                    "judge_id": judge_id,
                    "model_id": model_id,
                    "language_scope": scope,
                    "hcq_total": POINTS * totals[m, s] if defined else None,
                    **{
                        group: None if np.isnan(views[m, s, g]) else POINTS * views[m, s, g]
                        for g, group in enumerate(groups)
                    },
                    "rank": int(ranks[m, s]) if defined else None,
                    "n_groups": int(n_groups[m, s]),
                    "n_capabilities": int(n_capabilities[m, s]),
                    "hcq_total_frac": float(totals[m, s]) if defined else None,
                }
            )
    return rows
