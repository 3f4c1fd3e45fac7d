"""`qct2i evaluate MODEL_ID`: its options and the command (the steps are
`dagster_defs.evaluation`'s, which the Dagster job `evaluate_generator` shares)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Plan -> generate (or check and copy --images) -> judge -> OCR -> append import -> build,
    then the generator's rows; a rerun goes on where the last one stopped."""
    from dagster_defs.evaluation import (
        EvaluationRefused,
        is_done,
        mark_done,
        prepare_evaluation,
        result_lines,
    )
    from qct2i.writer_commands import cmd_build, cmd_import, pin_warehouse

    warehouse = pin_warehouse()
    request = _request(args)
    try:
        folder = prepare_evaluation(
            request, warehouse, args.replace, log=_say, progress_to=sys.stderr
        )
    except EvaluationRefused as refused:
        print(refused, file=sys.stderr)
        return 2
    if is_done(folder):
        print(f"nothing new: the published warehouse holds every row of {folder}")
    else:
        imported = cmd_import(_import_args(args, folder))
        if imported != 0:
            return imported
        print("dbt build ... (its log is shown if it fails)", file=sys.stderr, flush=True)
        build = {"official_judge": args.official_judge, "wait": args.wait, "dbt_log": False}
        built = cmd_build(argparse.Namespace(**build))
        if built != 0:
            return built
        mark_done(folder)
    from reporting.html_report import default_report_path, write_report

    print("\n".join(result_lines(warehouse, request)))
    print(f"report: {write_report(warehouse, default_report_path(warehouse))}")
    return 0


def _say(line: str) -> None:
    """A line of stdout, flushed: it keeps its place among the progress lines on stderr."""
    print(line, flush=True)


def _import_args(args: argparse.Namespace, folder: Path) -> argparse.Namespace:
    return argparse.Namespace(
        folder=str(folder),
        append=True,
        replace_model=[args.model_id] if args.replace else [],
        replace_judge=[],
        image_root=[],
        wait=args.wait,
    )


def _request(args: argparse.Namespace):
    from dagster_defs.evaluation import Request

    call_kwargs = json.loads(args.call_kwargs) if args.call_kwargs else {}
    return Request.of({**vars(args), "call_kwargs": call_kwargs})


def _call_kwargs(text: str) -> str:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--call-kwargs must be a JSON object")
    return text


def add_evaluate(commands) -> None:
    from qct2i.writer_commands import add_wait

    evaluate = commands.add_parser(
        "evaluate",
        help="a new generator from its checkpoint or images to its leaderboard rows, in one step",
        description="Plan, generate (or take --images), judge, read text, import and build: the "
        "new generator's rows per scope. A rerun continues where it stopped.",
    )
    evaluate.add_argument("model_id", help="the new generator's id (letters, digits, . _ -)")
    how = evaluate.add_mutually_exclusive_group(required=True)
    how.add_argument("--pipeline-class", help="a diffusers pipeline class, with --weights")
    how.add_argument("--registry", action="store_true", help="a row of seeds/generators.csv")
    how.add_argument(
        "--images", metavar="DIR", help="DIR/<prompt_id>.png|jpg|webp, drawn elsewhere"
    )
    evaluate.add_argument("--weights", metavar="PATH_OR_HUB_ID", help="with --pipeline-class")
    evaluate.add_argument("--steps", type=int, default=28)
    evaluate.add_argument("--guidance", type=float, default=4.0)
    evaluate.add_argument("--guidance-arg", default="guidance_scale")
    evaluate.add_argument("--width", type=int, default=1024)
    evaluate.add_argument("--height", type=int, default=1024)
    evaluate.add_argument("--gpus", type=int, default=1)
    evaluate.add_argument("--call-kwargs", type=_call_kwargs, help="further call arguments (JSON)")
    evaluate.add_argument(
        "--budget", type=float, help="share of the concepts (default: every prompt)"
    )
    evaluate.add_argument(
        "--strategy", choices=["random", "stratified", "irt"], default="irt", help="with --budget"
    )
    evaluate.add_argument("--seed", type=int, default=0, help="the plan's seed")
    evaluate.add_argument(
        "--replace",
        action="store_true",
        help="start over: replace the generator's stored evidence and earlier evaluation",
    )
    evaluate.add_argument("--official-judge", metavar="JUDGE_ID")
    add_wait(evaluate)
    evaluate.set_defaults(func=cmd_evaluate)
