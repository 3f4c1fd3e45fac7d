"""Bench stage `reliability`: the vectorised concept bootstrap against a naive per-draw baseline.

`bootstrap_s`: 2,000 paired draws for the three scopes (en, zh, bilingual) at paper scale, from
the per-prompt sufficient statistics already in memory: building the dense per-concept arrays,
the draws (W @ S), Eq. 2/3 scores and HCQ per draw, and the rank / top-1 / pairwise summaries.
`bootstrap_load_s` is reading the statistics from the warehouse, reported apart.

`bootstrap_naive_s_per_draw`: what a bootstrap costs without sufficient statistics: per draw,
resample concepts, then re-aggregate the question records and text matches in DuckDB SQL
(weighted by how often each concept was drawn) into scores and HCQ totals. Timed on a few
draws after a warm-up; `bootstrap_naive_s_estimate` scales it to the same 2,000 draws.
"""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from method.bootstrap import (
    bootstrap_totals,
    pairwise_intervals,
    rank_intervals,
    stats_from_arrow,
    top1_probability,
)

DRAWS = 2000
SEED = 20260829
NAIVE_DRAWS = 3

NAIVE_SQL = """
with
records as (
    select r.model_id, r.language, r.capability, c.group_key, c.evidence,
        sum(w.weight * r.is_valid::int) as n_valid,
        sum(w.weight * (r.is_valid and r.outcome = 1)::int) as n_valid_yes
    from marts.fct_question_records as r
    inner join draw_weights as w on r.concept_id = w.concept_id
    inner join seeds.capabilities as c on r.capability = c.capability
    group by all
),
text_sums as (
    select t.model_id, p.language,
        sum(w.weight * t.edit_distance_utf16) as d, sum(w.weight * t.target_length_utf16) as l
    from intermediate.int_text_match as t
    inner join staging.stg_prompts as p on t.prompt_id = p.prompt_id
    inner join draw_weights as w on p.concept_id = w.concept_id
    where t.transcription_status = 'ok'
    group by all
),
scores as (
    select records.model_id, records.language, records.group_key,
        case when records.evidence = 'transcription'
            then case when text_sums.l > 0 then greatest(0.0, 1.0 - text_sums.d / text_sums.l) end
            else records.n_valid_yes / nullif(records.n_valid, 0)
        end as score
    from records
    left join text_sums
        on records.model_id = text_sums.model_id and records.language = text_sums.language
),
group_views as (
    select model_id, language, group_key, avg(score) as view
    from scores where score is not null group by all
),
totals as (
    select model_id, language, avg(view) as total from group_views group by all
)
select model_id, language, total from totals
union all
select model_id, 'bilingual', avg(total) from totals group by model_id having count(*) = 2
"""


def _summaries(totals: np.ndarray) -> None:
    for s in range(totals.shape[2]):
        top1_probability(totals[:, :, s])
        rank_intervals(totals[:, :, s])
        pairwise_intervals(totals[:, :, s])


STATISTICS = (
    "intermediate.int_prompt_sufficient_stats",
    "seeds.capabilities",
    "intermediate.int_capability_scores",
)


def timed_bootstrap(con: duckdb.DuckDBPyConnection):
    """(statistics, load_s, bootstrap_s): reading the sufficient statistics, then the draws and
    their summaries, timed apart (`make bench` and `make bench-scale` report both)."""
    start = time.perf_counter()
    tables = [con.sql(f"select * from {name}").to_arrow_table() for name in STATISTICS]
    load_s = time.perf_counter() - start
    start = time.perf_counter()
    stats = stats_from_arrow(*tables)
    _summaries(bootstrap_totals(stats, DRAWS, SEED))
    return stats, load_s, time.perf_counter() - start


def measure(warehouse: Path, bundle: Path, work: Path) -> dict:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        stats, load_s, bootstrap_s = timed_bootstrap(con)

        concepts = np.array(stats.concept_ids)
        rng = np.random.default_rng(SEED)
        per_draw = []
        for i in range(NAIVE_DRAWS + 1):  # the first is a warm-up
            start = time.perf_counter()
            counts = np.bincount(
                rng.integers(0, len(concepts), len(concepts)), minlength=len(concepts)
            )
            drawn = counts > 0
            weights = pa.table(
                {"concept_id": concepts[drawn], "weight": counts[drawn].astype(np.int64)}
            )
            con.register("draw_weights", weights)
            con.sql(NAIVE_SQL).fetchall()
            con.unregister("draw_weights")
            if i:
                per_draw.append(time.perf_counter() - start)
    naive_s = float(np.mean(per_draw))
    return {
        "bootstrap_draws": DRAWS,
        "bootstrap_scopes": len(stats.scopes),
        "bootstrap_load_s": round(load_s, 2),
        "bootstrap_s": round(bootstrap_s, 2),
        "bootstrap_naive_s_per_draw": round(naive_s, 3),
        "bootstrap_naive_s_estimate": round(naive_s * DRAWS, 1),
        "bootstrap_speedup_vs_naive": round(naive_s * DRAWS / bootstrap_s, 1),
    }


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("warehouse", type=Path)
    args = parser.parse_args()
    print(json.dumps(measure(args.warehouse, Path(), Path()), indent=2))
