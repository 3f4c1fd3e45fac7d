"""The writer commands every `qct2i` command module shares: `qct2i import` and `qct2i build`, the
warehouse they write (pinned once) and their `--wait` option. Below `cli.py` and the command
modules (`calibrate_command`, `evaluate_command`, `release_commands`), which import them from here,
so no module imports the one that imports it (an import-linter contract, pyproject.toml)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ingestion.paths import warehouse_path


def pin_warehouse() -> Path:
    """Resolve QCT2I_WAREHOUSE once, absolutely, so dbt and ingestion open the same file."""
    path = warehouse_path()
    os.environ["QCT2I_WAREHOUSE"] = str(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def cmd_import(args: argparse.Namespace) -> int:
    """Load a bundle into the working copy (replacing, or with --append adding to, the raw
    tables); readers see it once `qct2i build` publishes."""
    from ingestion.bundle import BundleError, load_bundle
    from ingestion.bundle.append import append_bundle
    from ingestion.bundle.manifest import MANIFEST_NAME, has_manifest
    from ingestion.store.warehouse import (
        Warehouse,
        WarehouseBusy,
        prepare_working_copy,
        writer_lock,
    )

    for flag, named in (
        ("--replace-model", args.replace_model),
        ("--replace-judge", args.replace_judge),
    ):
        if named and not args.append:
            print(f"{flag} only applies to an append import (--append)", file=sys.stderr)
            return 2
    warehouse = Warehouse(pin_warehouse())
    folder = Path(args.folder)
    image_roots = [Path(root) for root in args.image_root]
    try:
        with writer_lock(warehouse, f"qct2i import {args.folder}", args.wait):
            working = prepare_working_copy(warehouse)
            if args.append:
                result = append_bundle(
                    folder,
                    working,
                    replace_models=args.replace_model,
                    replace_judges=args.replace_judge,
                    image_roots=image_roots,
                )
            else:
                counts = load_bundle(folder, working, image_roots=image_roots)
    except (BundleError, WarehouseBusy) as error:
        print(error, file=sys.stderr)
        return 2
    if has_manifest(folder):  # load_bundle / append_bundle refuse a release that fails it
        print(f"{folder / MANIFEST_NAME}: every file matches its SHA-256")
    if not args.append:
        print("imported " + ", ".join(f"{name}={n}" for name, n in counts.items()))
    elif not result.changed:
        print(f"nothing new: the warehouse already holds every row of {folder}")
        return 0
    else:
        print("appended " + ", ".join(f"{name}={n}" for name, n in result.added.items()))
        if any(result.replaced.values()):
            dropped = ", ".join(f"{name}={n}" for name, n in result.replaced.items() if n)
            print(f"replaced the stored rows of {_named_slices(args)}: {dropped}")
    print(f"into the working copy {warehouse.working}; `qct2i build` publishes it")
    return 0


def _named_slices(args: argparse.Namespace) -> str:
    models = [f"generator {model}" for model in args.replace_model]
    return ", ".join(models + [f"judge {judge}" for judge in args.replace_judge])


def cmd_build(args: argparse.Namespace) -> int:
    """`dbt build` on the working copy, incremental where the last build's record allows
    (`ingestion.store.build_inputs`), full with `--full`; publish it only if every model and
    test passed."""
    from ingestion.store.build_inputs import dbt_selection, describe, prepare_build
    from ingestion.store.warehouse import (
        PublishRefused,
        Warehouse,
        WarehouseBusy,
        prepare_working_copy,
        publish,
        writer_lock,
    )
    from qct2i.dbt_runner import DbtFailed, run_dbt

    warehouse = Warehouse(pin_warehouse())
    try:
        with writer_lock(warehouse, "qct2i build", args.wait):
            working = prepare_working_copy(warehouse)
            official, refusal = _official_judge(working, args.official_judge)
            if refusal:
                print(refusal, file=sys.stderr)
                return 2
            build_vars = {"official_judge": official} if official else {}
            plan, inputs = prepare_build(working, build_vars, getattr(args, "full", False))
            selection = dbt_selection(plan)
            # before dbt's output, which goes straight out
            print(describe(plan, selection), flush=True)
            # `incremental_build` changes how, never what, the models build: not a build var
            dbt_vars = build_vars if plan.full else {**build_vars, "incremental_build": True}
            extra = ["--vars", json.dumps(dbt_vars)] if dbt_vars else []
            # `dbt_log` False (qct2i evaluate): dbt's output captured, its summary line printed,
            # its tail in the failure's message
            echo = getattr(args, "dbt_log", True)
            built = run_dbt("build", working, select=selection, extra=extra, echo=echo)
            stamp = publish(warehouse, build_vars=build_vars, build_inputs=inputs)
    except WarehouseBusy as busy:
        print(busy, file=sys.stderr)
        return 2
    except (DbtFailed, PublishRefused) as failure:
        print(
            f"{failure}\nNot published: {warehouse.published} is unchanged; the failed build "
            f"stays in {warehouse.working} for inspection, and the next build starts from it.",
            file=sys.stderr,
        )
        return 1
    if not echo:
        print(dbt_summary(built.stdout))
    print(f"published {warehouse.published} (build {stamp['build_id']})")
    return 0


def dbt_summary(output: str) -> str:
    """`dbt build: PASS=323 WARN=0 ERROR=0 SKIP=0 NO-OP=3 TOTAL=326`, from dbt's last line."""
    import re

    counts = re.findall(r"Done\. (PASS=[^\x1b\r\n]*)", output)
    return f"dbt build: {counts[-1].strip() if counts else 'done'}"


def _official_judge(working: Path, named: str | None) -> tuple[str | None, str | None]:
    """(the judge to build with, None for the dbt default; why the build would score no
    judgment, said before dbt runs with the judges held, or None). A warehouse holding one
    judge's judgments (a release naming its one judge) builds with it unless told otherwise."""
    from ingestion.bundle.format import DEFAULT_JUDGE_ID
    from ingestion.store.warehouse import judges_held

    official, held = named or DEFAULT_JUDGE_ID, judges_held(working)
    if not held or official in held:
        return named, None
    if not named and len(held) == 1:
        print(f"official judge: {held[0]} (the one judge this warehouse holds)")
        return held[0], None
    how = "--official-judge" if named else "no --official-judge: the judge of a bundle naming none"
    return named, (
        f"the official judge {official!r} ({how}) has no judgments in this warehouse, which "
        f"holds the judgments of {', '.join(held)}: pick one with "
        f"`qct2i build --official-judge {held[0]}`. Nothing was built."
    )


def add_wait(command: argparse.ArgumentParser) -> None:
    from ingestion.store.warehouse import writer_wait_s

    command.add_argument(
        "--wait",
        type=float,
        default=writer_wait_s(),
        metavar="SECONDS",
        help="wait this long for another import or build to finish (default: "
        "$QCT2I_WRITER_WAIT_S, else 0: fail at once, naming the other writer)",
    )
