"""Coverage study of the paired concept bootstrap (METHOD 11), run by `make validate`.

Many independent simulated worlds (a new seed each: new prompts, new DSGs, new outcomes;
independent Bernoulli draws, `balanced=False`), each scored by the real pipeline and
bootstrapped exactly as `int_reliability_draws` does. The truth of each world is known: the
simulator plants a rate per generator, language and capability (for Text Content the
per-character accuracy, which Eq. 3 estimates), and the true HCQ total is HCQ of the planted
rates (`planted.json` -> rates -> hcq_total), the limit of an infinitely large draw of the same
world. The study reports how often the 95% pairwise percentile intervals cover the true
difference, per scope and overall; the target is 92-98%.

To pay for one import and one dbt build instead of one per world, the worlds are stacked into
one bundle (ids prefixed `w<k>-`) and separated again by concept id: every statistic the
bootstrap uses is a sum over a world's own concepts, so stacking changes nothing.

    python -m bench.coverage_study [--worlds 100] [--concepts 200] [--draws 2000]
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import time
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ingestion.bundle import load_bundle
from ingestion.paths import PROJECT_ROOT
from ingestion.sources.simulator import SimulationConfig, simulate
from method.bootstrap import bootstrap_totals, pairwise_intervals, stats_from_arrow
from qct2i.dbt_runner import run_dbt

BENCH_DIR = PROJECT_ROOT / "bench"
MODELS = ("flux2-dev", "ernie-image", "z-image-base", "qwen-image")
ID_COLUMNS = ("prompt_id", "concept_id", "image_id")


def stacked_bundle(work: Path, worlds: int, concepts: int, seed: int) -> tuple[Path, list[dict]]:
    """Simulate `worlds` worlds and write them as one bundle; returns it and each planted.json."""
    merged: dict[str, list[pa.Table]] = {}
    planted = []
    for k in range(worlds):
        out = work / f"world{k}"
        config = SimulationConfig(concepts=concepts, seed=seed + k, models=MODELS, fmt="parquet")
        simulate(out, config)
        planted.append(json.loads((out / "planted.json").read_text(encoding="utf-8")))
        for path in sorted(out.glob("*.parquet")):
            if path.stem == "generators" and k:
                continue
            table = pq.read_table(path)
            for name in ID_COLUMNS:
                if name in table.column_names:
                    column = pc.binary_join_element_wise(f"w{k}", table[name], "-")
                    table = table.set_column(table.column_names.index(name), name, column)
            merged.setdefault(path.stem, []).append(table)
        shutil.rmtree(out)
    bundle = work / "bundle"
    bundle.mkdir(parents=True, exist_ok=True)
    for name, tables in merged.items():
        pq.write_table(pa.concat_tables(tables), bundle / f"{name}.parquet")
    return bundle, planted


def build(warehouse: Path, target: Path) -> None:
    run_dbt(
        "build",
        warehouse,
        select=("+int_prompt_sufficient_stats", "+int_capability_scores"),
        target_path=target,
        # the tests of the selected models only
        extra=("--quiet", "--indirect-selection", "cautious"),
    )


def true_totals(planted: dict, models: tuple[str, ...]) -> np.ndarray:
    """[M, 3]: planted HCQ totals for en, zh and their 50/50 bilingual mean."""
    en = np.array([planted["rates"][m]["en"]["hcq_total"] for m in models])
    zh = np.array([planted["rates"][m]["zh"]["hcq_total"] for m in models])
    return np.stack([en, zh, (en + zh) / 2], axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worlds", type=int, default=100)
    parser.add_argument("--concepts", type=int, default=200)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=5000)
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "coverage.json")
    args = parser.parse_args()
    started = time.perf_counter()

    work = BENCH_DIR / "work" / "coverage"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    bundle, planted = stacked_bundle(work, args.worlds, args.concepts, args.seed)
    warehouse = work / "coverage.duckdb"
    load_bundle(bundle, warehouse)
    build(warehouse, work / "target")
    with duckdb.connect(str(warehouse), read_only=True) as con:
        stats_table = con.sql(
            "select *, split_part(concept_id, '-', 1) as world "
            "from intermediate.int_prompt_sufficient_stats"
        ).to_arrow_table()
        capabilities = con.sql("select * from seeds.capabilities").to_arrow_table()
        capability_scores = con.sql(
            "select capability, score_source from intermediate.int_capability_scores"
        ).to_arrow_table()

    scopes = ("en", "zh", "bilingual")
    covered = {s: [] for s in scopes}
    widths = {s: [] for s in scopes}
    for k in range(args.worlds):
        rows = stats_table.filter(pc.equal(stats_table["world"], f"w{k}"))
        stats = stats_from_arrow(rows, capabilities, capability_scores)
        assert stats.model_ids == tuple(sorted(MODELS)) and stats.scopes == scopes
        totals = bootstrap_totals(stats, args.draws, seed=args.seed + k)
        truth = true_totals(planted[k], stats.model_ids)
        for s, scope in enumerate(scopes):
            lo, hi = pairwise_intervals(totals[:, :, s])
            for a, b in itertools.combinations(range(len(stats.model_ids)), 2):
                true_diff = truth[a, s] - truth[b, s]
                covered[scope].append(bool(lo[a, b] <= true_diff <= hi[a, b]))
                widths[scope].append(100 * (hi[a, b] - lo[a, b]))

    def share(flags):
        p = float(np.mean(flags))
        return {
            "coverage": round(p, 4),
            "n_intervals": len(flags),
            "binomial_se": round(float(np.sqrt(p * (1 - p) / len(flags))), 4),
        }

    everything = [f for s in scopes for f in covered[s]]
    result = {
        "worlds": args.worlds,
        "concepts_per_world": args.concepts,
        "models": list(MODELS),
        "draws": args.draws,
        "nominal": 0.95,
        "overall": share(everything),
        "by_scope": {
            s: share(covered[s]) | {"mean_width_points": round(float(np.mean(widths[s])), 3)}
            for s in scopes
        },
        "target": [0.92, 0.98],
        "within_target": 0.92 <= float(np.mean(everything)) <= 0.98,
        "elapsed_s": round(time.perf_counter() - started, 1),
        "note": "unordered pairs (an ordered pair's mirror covers exactly when it does); "
        "pairs within one world share its draws, so the binomial SE is a lower bound",
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
