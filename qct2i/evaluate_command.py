"""`qct2i evaluate MODEL_ID`: its options and the command (the steps are `qct2i.evaluate`'s)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Plan -> generate (or check and copy --images) -> judge -> OCR -> append import -> build,
    then the generator's rows; a rerun goes on where the last one stopped."""
    from qct2i.cli import _pin_warehouse, cmd_build, cmd_import
    from qct2i.evaluate import (
        EvaluationRefused,
        check_request,
        is_done,
        mark_done,
        register,
        result_lines,
        run_gpu_steps,
        start_or_resume,
    )

    warehouse = _pin_warehouse()
    request = _request(args)
    if not warehouse.exists():
        print(f"{warehouse}: no published warehouse to evaluate against; run `qct2i demo` or "
              "`qct2i import DIR` and `qct2i build` first", file=sys.stderr)  # fmt: skip
        return 2
    try:
        check_request(request)
        folder, started = start_or_resume(request, warehouse, args.replace)
        print(f"{'started' if started else 'resuming'} {folder}")
        if request.source == "images":
            _add_images(request, folder)
        register(request, folder)
        run_gpu_steps(request, folder, log=_say, progress_to=sys.stderr)
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
    """A line of the command's output, flushed: it stays in order with the progress on stderr."""
    print(line, flush=True)


def _add_images(request, folder: Path) -> None:
    """The user's folder checked against the plan's prompts, then copied into the evaluation."""
    from ingestion.backends.drivers.calibration import upsert_generator_row
    from ingestion.backends.drivers.runs import read_rows
    from ingestion.sources.image_folder import (
        ImageFolderError,
        add_folder_images,
        read_image_folder,
    )
    from qct2i.evaluate import EvaluationRefused, images_generator_row

    prompt_ids = [row["prompt_id"] for row in read_rows(folder / "prompts.jsonl")]
    try:
        images = read_image_folder(Path(request.images), prompt_ids)
    except ImageFolderError as error:
        raise EvaluationRefused(str(error)) from None
    added = add_folder_images(images, request.model_id, folder)
    upsert_generator_row(folder, images_generator_row(request))
    print(f"images: {added} added from {request.images} ({len(images) - added} already there)")


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
    from qct2i.evaluate import Request, Settings

    source = "images" if args.images else "registry" if args.registry else "pipeline"
    settings = None
    if source == "pipeline":
        settings = Settings(
            steps=args.steps,
            guidance=args.guidance,
            guidance_arg=args.guidance_arg,
            width=args.width,
            height=args.height,
            gpus=args.gpus,
            call_kwargs=json.loads(args.call_kwargs) if args.call_kwargs else {},
        )
    return Request(
        model_id=args.model_id,
        source=source,
        pipeline_class=args.pipeline_class,
        weights=str(Path(args.weights).resolve()) if _is_folder(args.weights) else args.weights,
        images=str(Path(args.images).resolve()) if args.images else None,
        settings=settings,
        budget=args.budget,
        strategy=args.strategy,
        seed=args.seed,
    )


def _is_folder(weights: str | None) -> bool:
    return bool(weights) and Path(weights).is_dir()


def _call_kwargs(text: str) -> str:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--call-kwargs must be a JSON object")
    return text


def add_evaluate(commands) -> None:
    from qct2i.cli import _add_wait

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
    _add_wait(evaluate)
    evaluate.set_defaults(func=cmd_evaluate)
