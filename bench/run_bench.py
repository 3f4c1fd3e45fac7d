"""`make bench`: import and `dbt build` at paper scale, written to bench/results.json.

Timings on a shared machine are noisy, so each figure is also reported as a ratio to a baseline
measured in the same run: DuckDB reading the same bundle files into tables with no validation.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import resource
import shutil
import time
from pathlib import Path

import duckdb

from ingestion.bundle import load_bundle
from ingestion.paths import PROJECT_ROOT
from ingestion.sources import simulator
from qct2i.dbt_runner import run_dbt

BENCH_DIR = PROJECT_ROOT / "bench"

# Further measurements over the built paper-scale warehouse: modules `bench/<name>.py` with
# `measure(warehouse: Path, bundle: Path, work: Path) -> dict` whose keys join results.json.
STAGES: tuple[str, ...] = (
    "structure",
    "reliability",
    "routing",
    "gpu_cpu",
    "subsets",
    "incremental",  # issue 33: a 14th generator appended, incremental against full build
)


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - start


def raw_read_baseline(bundle: Path, scratch: Path) -> float:
    """Seconds for DuckDB alone to read every bundle file into a table (no checks)."""
    with duckdb.connect(str(scratch)) as con:
        start = time.perf_counter()
        for path in sorted(bundle.glob("*.*")):
            if path.suffix == ".jsonl":
                con.execute(f"create table {path.stem} as select * from read_json('{path}')")
            elif path.suffix == ".parquet":
                con.execute(f"create table {path.stem} as select * from read_parquet('{path}')")
        return time.perf_counter() - start


def dbt_build(warehouse: Path, target: Path) -> float:
    start = time.perf_counter()
    run_dbt("build", warehouse, target_path=target, extra=("--quiet",))
    return time.perf_counter() - start


def record(results: dict, **figures) -> None:
    """Add figures and rewrite results.json now: an interrupted bench keeps what it measured."""
    results.update(figures)
    (BENCH_DIR / "results.json").write_text(json.dumps(results, indent=2) + "\n")


def peak_rss_mb() -> float:
    peak_kb = max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    )
    return round(peak_kb / 1024, 1)


def build_paper_warehouse(concepts: int, fmt: str, work: Path, results: dict) -> None:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    bundle, warehouse = work / "bundle", work / "bench.duckdb"
    config = simulator.SimulationConfig(concepts=concepts, seed=0, fmt=fmt)
    _, simulate_s = timed(simulator.simulate, bundle, config)
    baseline_s = raw_read_baseline(bundle, work / "baseline.duckdb")
    counts, import_s = timed(load_bundle, bundle, warehouse)
    record(
        results,
        concepts=concepts,
        bundle_format=fmt,
        n_judgments=counts["judgments"],
        simulate_s=round(simulate_s, 2),
        baseline_raw_read_s=round(baseline_s, 2),
        import_s=round(import_s, 2),
        import_vs_raw_read=round(import_s / baseline_s, 2),
    )
    dbt_build_s = dbt_build(warehouse, work / "target")
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (n_records,) = con.execute("select count(*) from marts.fct_question_records").fetchone()
    record(
        results,
        n_question_records=n_records,
        dbt_build_s=round(dbt_build_s, 2),
        dbt_build_vs_raw_read=round(dbt_build_s / baseline_s, 2),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--concepts", default="paper")
    parser.add_argument("--format", default="jsonl", choices=["jsonl", "parquet"])
    parser.add_argument(
        "--stages-only",
        action="store_true",
        help="reuse bench/work's built warehouse: rerun the analysis stages only",
    )
    args = parser.parse_args()
    work = BENCH_DIR / "work"
    results_path = BENCH_DIR / "results.json"
    results = json.loads(results_path.read_text()) if args.stages_only else {}
    if not args.stages_only:
        build_paper_warehouse(simulator.parse_scale(args.concepts), args.format, work, results)
    for stage in STAGES:
        module = importlib.import_module(f"bench.{stage}")
        record(results, **module.measure(work / "bench.duckdb", work / "bundle", work))
    record(results, peak_rss_mb=peak_rss_mb(), cpu_count=os.cpu_count())
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
