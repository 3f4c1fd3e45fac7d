"""`python -m ingestion.sources.simulator`: write a simulated bundle from the command line."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ingestion.bundle.format import BUNDLE_FORMATS
from ingestion.sources.simulator.calibration import DEMO_CONCEPTS, PAPER_CONCEPTS, parse_scale
from ingestion.sources.simulator.simulation import SimulationConfig, simulate

_DEFAULTS = SimulationConfig()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ingestion.sources.simulator",
        description="Write a simulated, Table-2-calibrated evidence bundle with planted truth.",
    )
    parser.add_argument("--out", type=Path, required=True, help="bundle folder to write")
    parser.add_argument(
        "--concepts",
        type=parse_scale,
        default=_DEFAULTS.concepts,
        help=f"number of concepts, or 'demo' ({DEMO_CONCEPTS}) / 'paper' ({PAPER_CONCEPTS})",
    )
    parser.add_argument("--seed", type=int, default=_DEFAULTS.seed)
    parser.add_argument("--coupling", type=float, default=_DEFAULTS.coupling)
    parser.add_argument("--format", choices=BUNDLE_FORMATS, default=_DEFAULTS.fmt, dest="fmt")
    parser.add_argument(
        "--balanced",
        action="store_true",
        help="balanced (stratified) draws instead of independent Bernoulli ones",
    )
    parser.add_argument(
        "--prompt-effect-sd",
        type=float,
        default=_DEFAULTS.prompt_effect_sd,
        help="sd of a logit offset per (concept, capability) shared by all generators (default 0)",
    )
    args = parser.parse_args(argv)
    config = SimulationConfig(
        concepts=args.concepts,
        seed=args.seed,
        coupling=args.coupling,
        fmt=args.fmt,
        balanced=args.balanced,
        prompt_effect_sd=args.prompt_effect_sd,
    )
    summary = simulate(args.out, config)
    counts = ", ".join(f"{k} {v:,}" for k, v in summary.row_counts.items())
    print(f"wrote {summary.out_dir} ({summary.fmt}) in {summary.elapsed_s:.1f} s: {counts}")
    return 0
