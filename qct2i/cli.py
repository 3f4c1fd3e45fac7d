"""`qct2i`: demo, import, import-dsg, import-release, build, leaderboard, route, plan, export,
verify, export-marts, report, docs (CONTRACTS.md, Commands)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from qct2i.calibrate_command import add_calibrate
from qct2i.evaluate_command import add_evaluate
from qct2i.release_commands import add_import_dsg, add_import_release
from qct2i.writer_commands import add_wait, cmd_build, cmd_import, pin_warehouse

_Commands = argparse._SubParsersAction  # what `add_subparsers` returns


def _published_warehouse() -> Path | None:
    """The published warehouse readers open, or None (with a message) when nothing is published."""
    path = pin_warehouse()
    if path.exists():
        return path
    print(
        f"{path}: no published warehouse yet; run `qct2i import DIR`, then `qct2i build`",
        file=sys.stderr,
    )
    return None


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from reporting.leaderboard import format_leaderboard

    warehouse = _published_warehouse()
    if warehouse is None:
        return 2
    print(format_leaderboard(warehouse, tuple(args.scopes)))
    return 0


def cmd_export_marts(args: argparse.Namespace) -> int:
    from qct2i.export import export_marts

    warehouse = _published_warehouse()
    if warehouse is None:
        return 2
    counts = export_marts(warehouse, Path(args.folder))
    print(f"wrote {len(counts)} marts to {args.folder} ({sum(counts.values())} rows)")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """The published warehouse's evidence as a Parquet release with a checksummed manifest."""
    from qct2i.evidence_release import ExportRefused, export_evidence

    warehouse = _published_warehouse()
    if warehouse is None:
        return 2
    try:
        manifest = export_evidence(warehouse, Path(args.folder), args.force)
    except ExportRefused as refused:
        print(refused, file=sys.stderr)
        return 2
    files = manifest["files"]
    rows = ", ".join(f"{entry['table']}={entry['rows']}" for entry in files.values())
    print(f"wrote {len(files)} files and manifest.json to {args.folder} ({rows})")
    print(f"manifest: {len(manifest['marts'])} mart hashes; `qct2i verify` checks a rebuild")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Whether DIR's files match its manifest and the published marts match its mart hashes."""
    from ingestion.bundle.manifest import (
        MANIFEST_NAME,
        ManifestUnreadable,
        manifest_problems,
        read_manifest,
    )
    from qct2i.evidence_release import mart_differences

    folder = Path(args.folder)
    try:
        manifest = read_manifest(folder)
    except ManifestUnreadable as error:
        print(f"{folder / MANIFEST_NAME}: {error}", file=sys.stderr)
        return 2
    changed = manifest_problems(folder)
    for file, reason in changed:
        print(f"{file}: {reason}", file=sys.stderr)
    warehouse = _published_warehouse()
    if warehouse is None:
        return 2
    differences, extras = mart_differences(warehouse, manifest)
    for line in differences:
        print(line, file=sys.stderr)
    if extras:
        print(f"not in the manifest (not compared): {', '.join(extras)}")
    if changed:
        print(f"{len(changed)} files differ from {MANIFEST_NAME}", file=sys.stderr)
    if differences:
        print(f"{len(differences)} of {len(manifest['marts'])} marts differ", file=sys.stderr)
        overrides = (manifest.get("build") or {}).get("build_vars")
        if overrides and overrides != "{}":
            print(f"the exporter built with the dbt vars {overrides}", file=sys.stderr)
    if changed or differences:
        return 1
    print(f"marts match the manifest: {len(manifest['marts'])} marts, each MD5 equal")
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    """dbt's documentation site as one offline file: models, columns, tests, lineage, catalog."""
    import shutil

    from qct2i.dbt_runner import DbtFailed, run_dbt

    warehouse = _published_warehouse()
    if warehouse is None:
        return 2
    out = Path(args.out).resolve()
    # the catalog is read from a copy: dbt opens its database read-write, which a published
    # file must never be
    with tempfile.TemporaryDirectory(prefix="qct2i-docs-") as tmp:
        copy = Path(tmp) / "catalog.duckdb"
        shutil.copyfile(warehouse, copy)
        try:
            # the site embeds manifest.json and catalog.json: written whatever DBT_WRITE_JSON says
            run_dbt("docs generate", copy, target_path=out, extra=("--static", "--write-json"))
        except DbtFailed as failure:
            print(failure, file=sys.stderr)
            return 1
    print(f"open {out / 'static_index.html'} in a browser (one file, works offline)")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """The Dagster `demo` job on the world `SimulationConfig` describes: simulate, import, build;
    the asset's run config is made from that config (`SimulatorConfig.of`)."""
    import dagster as dg

    from ingestion.sources.simulator import SimulationConfig

    warehouse = pin_warehouse()
    # after the warehouse is pinned
    from dagster_defs.assets.ingestion import SimulatorConfig
    from dagster_defs.definitions import defs

    simulation = SimulationConfig(concepts=args.concepts, seed=args.seed)
    run_config = dg.RunConfig(ops={"simulated_bundle": SimulatorConfig.of(simulation)})
    result = defs().resolve_job_def("demo").execute_in_process(run_config=run_config)
    if not result.success:
        return 1
    from reporting.html_report import default_report_path
    from reporting.leaderboard import format_leaderboard

    print(format_leaderboard(warehouse))
    # the demo job's `report` asset wrote it; `make demo` ends on this line
    print(f"report: {default_report_path(warehouse)}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """The self-contained HTML report of the published warehouse (issue 13)."""
    from reporting.html_report import default_report_path, write_report

    warehouse = _published_warehouse()
    if warehouse is None:
        return 2
    out = Path(args.out).resolve() if args.out else default_report_path(warehouse)
    print(write_report(warehouse, out))
    return 0


def cmd_route(args: argparse.Namespace) -> int:
    from ingestion.bundle import BundleError, read_questions_file
    from method.routing import route_requests
    from qct2i.route import format_route, load_live_profiles

    if (args.file is None) == (args.prompt is None):
        print("route: give a questions file or --prompt TEXT (one of the two)", file=sys.stderr)
        return 2
    from qct2i.route import PromptRejected, questions_for_prompt

    try:
        if args.prompt is not None:
            questions = questions_for_prompt(args.prompt, args.language)
        else:
            questions = read_questions_file(Path(args.file))
    except (BundleError, PromptRejected) as error:
        print(error, file=sys.stderr)
        return 2
    warehouse = _published_warehouse()
    if warehouse is None:
        return 2
    profiles, live_eps = load_live_profiles(warehouse)
    result = route_requests(questions, profiles, args.language, args.eps, live_eps)
    print(
        json.dumps(result.as_json(), ensure_ascii=False, indent=1)
        if args.json
        else format_route(result)
    )
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """The prompts a new generator should draw (METHOD 16; ingestion/store/plans.py)."""
    from ingestion.store.plans import PlanError, format_plan, make_plan_folder

    warehouse = _published_warehouse()
    if warehouse is None:
        return 2
    try:
        result = make_plan_folder(
            warehouse,
            Path(args.out),
            args.budget,
            args.strategy,
            args.seed,
            model=args.model,
            target_rank_width=args.target_rank_width,
        )
    except PlanError as error:
        print(error, file=sys.stderr)
        return 2
    print(format_plan(result))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The `qct2i` parser: one `_add_<command>` per subcommand, in the order `--help` lists them."""
    parser = argparse.ArgumentParser(
        prog="qct2i",
        description="QC-T2I warehouse. The warehouse is the DuckDB file named by QCT2I_WAREHOUSE "
        "(default warehouse/qct2i.duckdb in the project root).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for add_command in (
        _add_demo,
        _add_import,
        add_import_dsg,
        add_import_release,
        add_evaluate,
        _add_build,
        add_calibrate,
        _add_leaderboard,
        _add_export_marts,
        _add_export,
        _add_verify,
        _add_report,
        _add_docs,
        _add_route,
        _add_plan,
    ):
        add_command(commands)
    return parser


def _add_demo(commands: _Commands) -> None:
    demo = commands.add_parser("demo", help="simulate, import and build through Dagster; print")
    demo.add_argument("--concepts", default="demo", help="number of concepts, 'demo' or 'paper'")
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=cmd_demo)


def _add_import(commands: _Commands) -> None:
    imp = commands.add_parser("import", help="validate a bundle and load it into the raw tables")
    imp.add_argument("folder")
    imp.add_argument(
        "--append",
        action="store_true",
        help="add the bundle's evidence to the stored evidence by natural key instead of "
        "replacing it; identical rows are no-ops, contradicting rows are refused",
    )
    imp.add_argument(
        "--replace-model",
        action="append",
        default=[],
        metavar="MODEL_ID",
        help="with --append: replace this generator's stored evidence with the bundle's "
        "(repeatable)",
    )
    imp.add_argument(
        "--replace-judge",
        action="append",
        default=[],
        metavar="JUDGE_ID",
        help="with --append: replace this judge's stored judgments with the bundle's (repeatable)",
    )
    imp.add_argument(
        "--image-root",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder outside the bundle that images.path may lead into; every path must "
        "resolve (symbolic links followed) inside the bundle folder or such a root, or the "
        "bundle is refused (repeatable)",
    )
    add_wait(imp)
    imp.set_defaults(func=cmd_import)


def _add_build(commands: _Commands) -> None:
    build = commands.add_parser(
        "build", help="dbt build on the working copy; publish it if every test passed"
    )
    build.add_argument(
        "--official-judge",
        metavar="JUDGE_ID",
        help="score the marts with this judge's judgments (dbt var official_judge; default: "
        "the project's, `default`, or the warehouse's one judge when it holds only one)",
    )
    build.add_argument(
        "--full",
        action="store_true",
        help="rebuild every model whole, even where an incremental build (the generators whose "
        "evidence changed since the last build) would do (docs/warehouse.md)",
    )
    add_wait(build)
    build.set_defaults(func=cmd_build)


def _add_leaderboard(commands: _Commands) -> None:
    board = commands.add_parser("leaderboard", help="print the HCQ leaderboard")
    board.add_argument("--scopes", nargs="+", default=["en", "zh", "bilingual"])
    board.set_defaults(func=cmd_leaderboard)


def _add_export_marts(commands: _Commands) -> None:
    export = commands.add_parser(
        "export-marts", help="write every mart of the published warehouse as Parquet"
    )
    export.add_argument("folder", help="the folder to write <mart>.parquet files into")
    export.set_defaults(func=cmd_export_marts)


def _add_export(commands: _Commands) -> None:
    release = commands.add_parser(
        "export", help="write the evidence as a Parquet release with a checksummed manifest"
    )
    release.add_argument("folder", help="a new or empty folder for the release")
    release.add_argument(
        "--force", action="store_true", help="replace a previous release (manifest.json) there"
    )
    release.set_defaults(func=cmd_export)


def _add_verify(commands: _Commands) -> None:
    verify = commands.add_parser(
        "verify", help="check a release's files and that the published marts match its manifest"
    )
    verify.add_argument("folder", help="the release folder (holding manifest.json)")
    verify.set_defaults(func=cmd_verify)


def _add_report(commands: _Commands) -> None:
    report = commands.add_parser("report", help="one self-contained, offline HTML report")
    report.add_argument("--out", help="the HTML file (default: report.html beside the warehouse)")
    report.set_defaults(func=cmd_report)


def _add_docs(commands: _Commands) -> None:
    docs = commands.add_parser("docs", help="dbt's documentation site as one offline HTML file")
    docs.add_argument("--out", default="target/docs", help="folder (default target/docs)")
    docs.set_defaults(func=cmd_docs)


def _add_route(commands: _Commands) -> None:
    route = commands.add_parser(
        "route", help="rank generators for new requests (a questions file, or a plain prompt)"
    )
    route.add_argument(
        "file", nargs="?", help="a questions file (.jsonl or .parquet, CONTRACTS.md columns)"
    )
    route.add_argument(
        "--prompt",
        help="a plain prompt instead of a file: the configured question writer (METHOD 13) "
        "turns it into questions first",
    )
    route.add_argument("--language", default="en", help="the requests' language (default en)")
    route.add_argument("--eps", type=float, help="Q-Profile-C epsilon (default: the warehouse's)")
    route.add_argument("--json", action="store_true", help="print JSON instead of a table")
    route.set_defaults(func=cmd_route)


def _add_plan(commands: _Commands) -> None:
    plan = commands.add_parser(
        "plan", help="the prompts a new generator should draw, chosen from the evidence held"
    )
    plan.add_argument(
        "--budget",
        type=float,
        required=True,
        help="share of the concepts to draw (adaptive: per round)",
    )
    plan.add_argument(
        "--strategy",
        choices=["random", "stratified", "irt", "adaptive"],
        default="irt",
        help="random; stratified (capability mix x difficulty); irt (2PL-informed pi-ps, the "
        "default); adaptive (irt in rounds until the rank interval is narrow enough)",
    )
    plan.add_argument("--seed", type=int, default=0)
    plan.add_argument("--out", required=True, help="a new folder for prompts/questions/plan.json")
    plan.add_argument("--model", help="adaptive: the new generator's model_id")
    plan.add_argument(
        "--target-rank-width",
        type=int,
        help="adaptive: stop once rank_hi - rank_lo (bilingual) is at most this",
    )
    plan.set_defaults(func=cmd_plan)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
