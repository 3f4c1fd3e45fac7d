"""`make bench-scale`: the pipeline at paper scale (1x) and at 10x the paper's evidence, in one run.

10x is 65,730 concepts x 2 languages x 13 generators: about 24.6 M question records. Each scale
runs in its own child process, so each peak RSS is that scale's alone: simulate the bundle (JSONL),
read it raw with DuckDB (the baseline), validate and import it, `dbt build` every model and test
(every analysis: structure, reliability, routing), then the concept bootstrap (2,000 draws x 3
scopes, from the sufficient statistics; reading them is timed apart). Peak RSS is reported for the
Python process (simulator, importer, bootstrap) and for the dbt process apart; the figure the issue
bounds is the larger. The dbt process's memory is also sampled during the build and attributed to
the models executing at each sample (bench/dbt_memory.py), so the models that peak are named.
Last, the append case of `make bench` (bench/incremental.py, issue 33) on the built warehouse: a
14th generator appended, `qct2i build` incremental against `--full` in the same run (`append`);
the peak RSS figures include its builds.

Writes bench/scale_results.json and prints each figure at both scales with the 10x / 1x ratio.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb

from bench import incremental
from bench.dbt_memory import measured
from bench.reliability import timed_bootstrap
from bench.run_bench import BENCH_DIR, dbt_build, raw_read_baseline, timed
from ingestion.bundle import load_bundle
from ingestion.sources import simulator

SCALES = {"1x": simulator.PAPER_CONCEPTS, "10x": 10 * simulator.PAPER_CONCEPTS}
REPORTED = ("import_s", "dbt_build_s", "bootstrap_s", "peak_rss_mb")


def _peak_mb(who: int) -> float:
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)


def measure_one_scale(concepts: int, work: Path) -> dict:
    """Every stage at one scale, in this process (run it in a fresh one per scale)."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    bundle, warehouse = work / "bundle", work / "scale.duckdb"
    config = simulator.SimulationConfig(concepts=concepts, seed=0)
    _, simulate_s = timed(simulator.simulate, bundle, config)
    python_after_simulate = _peak_mb(resource.RUSAGE_SELF)
    baseline_s = raw_read_baseline(bundle, work / "baseline.duckdb")
    (work / "baseline.duckdb").unlink()
    counts, import_s = timed(load_bundle, bundle, warehouse)
    target = work / "target"
    dbt_build_s, peak_nodes, sampled_peak = measured(lambda: dbt_build(warehouse, target), target)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (records,) = con.execute("select count(*) from marts.fct_question_records").fetchall()[0]
        _, bootstrap_load_s, bootstrap_s = timed_bootstrap(con)
    append = incremental.measure(warehouse, bundle, work, through_dagster=False)
    python_peak, dbt_peak = _peak_mb(resource.RUSAGE_SELF), _peak_mb(resource.RUSAGE_CHILDREN)
    return {
        "concepts": concepts,
        "judgments": counts["judgments"],
        "question_records": records,
        "bundle_mb": round(sum(p.stat().st_size for p in bundle.iterdir()) / 2**20),
        "warehouse_mb": round(warehouse.stat().st_size / 2**20),
        "simulate_s": round(simulate_s, 1),
        "baseline_raw_read_s": round(baseline_s, 2),
        "import_s": round(import_s, 2),
        "dbt_build_s": round(dbt_build_s, 1),
        "bootstrap_load_s": round(bootstrap_load_s, 2),
        "bootstrap_s": round(bootstrap_s, 2),
        "python_peak_rss_mb_after_simulate": python_after_simulate,
        "python_peak_rss_mb": python_peak,
        "dbt_peak_rss_mb": dbt_peak,
        "peak_rss_mb": max(python_peak, dbt_peak),
        "dbt_sampled_peak_rss_mb": sampled_peak,
        "dbt_nodes_by_peak_rss": peak_nodes,
        "append": append,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", nargs="+", default=list(SCALES), choices=list(SCALES))
    parser.add_argument("--one", choices=list(SCALES), help=argparse.SUPPRESS)  # the child's
    args = parser.parse_args()
    work = BENCH_DIR / "work-scale"
    if args.one:
        print(json.dumps(measure_one_scale(SCALES[args.one], work / args.one)))
        return 0
    results_path = BENCH_DIR / "scale_results.json"
    results = {}
    for scale in args.scales:
        child = subprocess.run(
            [sys.executable, "-m", "bench.run_scale", "--one", scale],
            capture_output=True,
            text=True,
        )
        if child.returncode != 0:
            print(child.stderr[-5000:], file=sys.stderr)
            return child.returncode
        results[scale] = json.loads(child.stdout.strip().splitlines()[-1])
        shutil.rmtree(work / scale, ignore_errors=True)
        results_path.write_text(json.dumps(results, indent=2) + "\n")
    if {"1x", "10x"} <= results.keys():
        results["ratio_10x_to_1x"] = {
            key: round(results["10x"][key] / results["1x"][key], 2)
            for key in (*REPORTED, "judgments", "baseline_raw_read_s")
        }
        results_path.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
