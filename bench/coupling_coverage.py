"""Null-coverage study of the coupling intervals (METHOD 9), run by `make validate`.

Independent simulated worlds with coupling 0 (a new seed each: new prompts, DSGs and outcomes;
independent Bernoulli draws), so every Delta and Gamma has truth 0 up to the estimator's own
small-sample bias. Each world is imported and built by the real pipeline up to the question
pairs and native outcomes that int_coupling_intervals reads, then bootstrapped with both
evaluations of a draw (`exact`: marginals rebuilt per draw; `linearised`: first-order in the
prompt weights). The study reports, per method, how often the 95% intervals cover 0, per
language x effect for the macro mean and per model, the mean interval widths, and the spread of
the point estimates over worlds (what an honest interval's width should match: width / 3.92).

Worlds cannot be stacked into one bundle (the marginals pool the other prompts of a world, and
the bootstrap resamples a world's prompts), so each world gets its own warehouse.

    python -m bench.coupling_coverage [--worlds 60] [--concepts 300] [--models 4] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections import defaultdict
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from ingestion.bundle import load_bundle
from ingestion.paths import PROJECT_ROOT
from ingestion.sources.simulator import SimulationConfig, load_generators, simulate
from method.structure import MACRO_MODEL, coupling_bootstrap
from qct2i.dbt_runner import run_dbt

BENCH_DIR = PROJECT_ROOT / "bench"
METHODS = ("exact", "linearised")
BOOTSTRAP_SEED = 20260829  # the dbt var structure_bootstrap_seed


def world_inputs(work: Path, seed: int, concepts: int, models: list[str]):
    """The question pairs and native outcome records of one null world, built by dbt."""
    bundle, warehouse = work / f"bundle{seed}", work / f"world{seed}.duckdb"
    config = SimulationConfig(
        concepts=concepts, seed=seed, coupling=0.0, models=models, fmt="parquet"
    )
    simulate(bundle, config)
    load_bundle(bundle, warehouse)
    run_dbt(
        "run",
        warehouse,
        select=("+int_question_pairs", "+int_question_validity"),
        target_path=work / "dbt_target",
        extra=("--quiet",),
    )
    pairs, records = coupling_inputs(warehouse)
    shutil.rmtree(bundle)
    warehouse.unlink()
    return pairs, records


def coupling_inputs(warehouse: Path) -> tuple[pa.Table, pa.Table]:
    """What int_coupling_intervals reads: the question pairs and the native outcome records."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        pairs = con.sql("select * from intermediate.int_question_pairs").to_arrow_table()
        records = con.sql(
            "select model_id, prompt_id, question_id, outcome"
            " from intermediate.int_question_validity"
        ).to_arrow_table()
    return pairs, records


def summarise(rows_by_method: dict[str, list[dict]]) -> dict:
    """Coverage of 0, mean width and estimate spread per method, scope and language x effect."""
    out: dict = {}
    for method, rows in rows_by_method.items():
        cells = defaultdict(list)
        for r in rows:
            scope = "macro" if r["model_id"] == MACRO_MODEL else "per_model"
            cells[scope, r["language"], r["effect"]].append(r)
        summary = {}
        for (scope, language, effect), members in sorted(cells.items()):
            estimate = np.array([r["estimate"] for r in members])
            lo = np.array([r["ci_lo"] for r in members])
            hi = np.array([r["ci_hi"] for r in members])
            summary[f"{scope}/{language}/{effect}"] = {
                "intervals": len(members),
                "coverage": round(float(np.mean((lo <= 0) & (hi >= 0))), 3),
                "mean_width_points": round(float(np.mean(hi - lo)) * 100, 3),
                "estimate_sd_points": (
                    round(float(np.std(estimate, ddof=1)) * 100, 3) if len(members) > 1 else None
                ),
            }
        for scope in ("macro", "per_model"):
            picked = [r for r in rows if (r["model_id"] == MACRO_MODEL) == (scope == "macro")]
            covered = sum(r["ci_lo"] <= 0 <= r["ci_hi"] for r in picked)
            summary[f"{scope}/all"] = {
                "intervals": len(picked),
                "coverage": round(covered / len(picked), 4),
            }
        out[method] = summary
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--worlds", type=int, default=60)
    parser.add_argument("--concepts", type=int, default=300)
    parser.add_argument("--models", type=int, default=4, help="the first N generators")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="first world seed")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "coupling_coverage.json")
    args = parser.parse_args()
    models = [g["model_id"] for g in load_generators()][: args.models]
    work = BENCH_DIR / "work" / "coupling_coverage"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    start = time.perf_counter()
    rows: dict[str, list[dict]] = {m: [] for m in METHODS}
    seconds = dict.fromkeys(METHODS, 0.0)
    for seed in range(args.seed, args.seed + args.worlds):
        pairs, records = world_inputs(work, seed, args.concepts, models)
        for method in METHODS:
            t = time.perf_counter()
            got = coupling_bootstrap(
                pairs, records, draws=args.draws, seed=BOOTSTRAP_SEED, method=method
            )
            seconds[method] += time.perf_counter() - t
            rows[method] += got
        print(f"world {seed} done ({time.perf_counter() - start:.0f} s)", flush=True)
    result = {
        "worlds": args.worlds,
        "concepts": args.concepts,
        "models": models,
        "draws": args.draws,
        "bootstrap_seconds": {m: round(s, 1) for m, s in seconds.items()},
        "wall_s": round(time.perf_counter() - start, 1),
        **summarise(rows),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for method in METHODS:
        print(method, {k: v for k, v in result[method].items() if k.endswith("/all")})


if __name__ == "__main__":
    main()
