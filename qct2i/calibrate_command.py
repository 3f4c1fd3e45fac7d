"""`qct2i calibrate FILE`: a GPU bench run's measured costs (`bench/gpu_bench.py`'s JSON) into the
working copy's generators, `cost_source = measured` with the GPU model they were measured on;
`qct2i build` publishes them, and the router uses them (docs/gpu.md, "Measured costs")."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def cmd_calibrate(args: argparse.Namespace) -> int:
    from ingestion.bundle import BundleError
    from ingestion.bundle.measured_costs import record_measured_costs
    from ingestion.sources.gpu_bench_costs import read_bench_costs
    from ingestion.store.warehouse import (
        Warehouse,
        WarehouseBusy,
        prepare_working_copy,
        writer_lock,
    )
    from qct2i.writer_commands import pin_warehouse

    source = Path(args.file)
    try:
        costs = read_bench_costs(source)  # refused whole before the warehouse is touched
        warehouse = Warehouse(pin_warehouse())
        with writer_lock(warehouse, f"qct2i calibrate {args.file}", args.wait):
            recorded = record_measured_costs(prepare_working_copy(warehouse), source, costs.rows)
    except (BundleError, WarehouseBusy) as error:
        print(error, file=sys.stderr)
        return 2
    measured = ", ".join(f"{row['model_id']} {row['cost_gpu_s_per_mp']:.2f}" for row in costs.rows)
    print(
        f"calibrated {len(costs.rows)} generators (GPU-s/MP measured on {costs.gpu_model}, "
        f"{costs.measured_at}): {measured}"
    )
    if recorded.added:
        print(f"new to the warehouse: {', '.join(recorded.added)}")
    if costs.skipped:
        skipped = ", ".join(f"{model_id} ({status})" for model_id, status in costs.skipped)
        print(f"no figure, left as they were: {skipped}")
    print(f"into the working copy {warehouse.working}; `qct2i build` publishes it")
    return 0


def add_calibrate(commands) -> None:
    from qct2i.writer_commands import add_wait

    calibrate = commands.add_parser(
        "calibrate",
        help="a GPU bench run's measured costs (bench/gpu_bench.py JSON) into the generators",
    )
    calibrate.add_argument("file", help="the run's gpu_bench.json")
    add_wait(calibrate)
    calibrate.set_defaults(func=cmd_calibrate)
