"""`qct2i`: demo, import, build, leaderboard and route (CONTRACTS.md, Commands)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ingestion.paths import warehouse_path


def _pin_warehouse() -> Path:
    """Resolve QCT2I_WAREHOUSE once, absolutely, so dbt and ingestion open the same file."""
    path = warehouse_path()
    os.environ["QCT2I_WAREHOUSE"] = str(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def cmd_import(args: argparse.Namespace) -> int:
    from ingestion.bundle import BundleError, load_bundle

    try:
        counts = load_bundle(Path(args.folder), _pin_warehouse())
    except BundleError as error:
        print(error, file=sys.stderr)
        return 2
    print("imported " + ", ".join(f"{name}={n}" for name, n in counts.items()))
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from qct2i.dbt_runner import DbtFailed, run_dbt

    try:
        run_dbt("build", _pin_warehouse(), echo=True)
    except DbtFailed as failure:
        print(failure, file=sys.stderr)
        return 1
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from qct2i.report import format_leaderboard

    print(format_leaderboard(_pin_warehouse(), tuple(args.scopes)))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from ingestion.simulator import parse_scale

    warehouse = _pin_warehouse()
    from dagster_defs.definitions import defs  # after the warehouse is pinned

    run_config = {
        "ops": {
            "simulated_bundle": {
                "config": {"concepts": parse_scale(args.concepts), "seed": args.seed}
            }
        }
    }
    result = defs().resolve_job_def("demo").execute_in_process(run_config=run_config)
    if not result.success:
        return 1
    from qct2i.report import format_leaderboard

    print(format_leaderboard(warehouse))
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    import json

    from ingestion.bundle import BundleError, read_questions_file
    from method.routing import route_requests
    from qct2i.route import format_route, load_live_profiles

    try:
        questions = read_questions_file(Path(args.file))
    except BundleError as error:
        print(error, file=sys.stderr)
        return 2
    profiles, live_eps = load_live_profiles(_pin_warehouse())
    result = route_requests(questions, profiles, args.language, args.eps, live_eps)
    print(
        json.dumps(result.as_json(), ensure_ascii=False, indent=1)
        if args.json
        else format_route(result)
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qct2i",
        description="QC-T2I warehouse. The warehouse is the DuckDB file named by QCT2I_WAREHOUSE "
        "(default warehouse/qct2i.duckdb in the project root).",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser("demo", help="simulate, import and build through Dagster; print")
    demo.add_argument("--concepts", default="demo", help="number of concepts, 'demo' or 'paper'")
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=cmd_demo)

    imp = commands.add_parser("import", help="validate a bundle and load it into the raw tables")
    imp.add_argument("folder")
    imp.set_defaults(func=cmd_import)

    build = commands.add_parser("build", help="dbt build: every model and test")
    build.set_defaults(func=cmd_build)

    board = commands.add_parser("leaderboard", help="print the HCQ leaderboard")
    board.add_argument("--scopes", nargs="+", default=["en", "zh", "bilingual"])
    board.set_defaults(func=cmd_leaderboard)

    route = commands.add_parser("route", help="rank generators for new requests (a questions file)")
    route.add_argument("file", help="a questions file (.jsonl or .parquet, CONTRACTS.md columns)")
    route.add_argument("--language", default="en", help="the requests' language (default en)")
    route.add_argument("--eps", type=float, help="Q-Profile-C epsilon (default: the warehouse's)")
    route.add_argument("--json", action="store_true", help="print JSON instead of a table")
    route.set_defaults(func=cmd_route)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
