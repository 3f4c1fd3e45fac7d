"""`qct2i import-dsg` and `qct2i import-release`: convert a public release into a bundle, report its
dirty rows and the rules applied, then import the bundle as `qct2i import` does; or, for a release
without answers (`oneig --questions-only --out DIR`), write the question bank the GPU path draws
from and import nothing (docs/releases.md)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ONEIG_NEEDS_QUESTIONS_ONLY = (
    "import-release oneig: OneIG-Bench ships questions but no answers, so there is nothing to "
    "import; write its question bank for the GPU path instead: qct2i import-release oneig "
    "--root DIR --questions-only --out DIR"
)
QUESTIONS_ONLY_NEEDS_OUT = (
    "import-release --questions-only: name the question bank's folder with --out DIR (absent or "
    "empty; e.g. the GPU bundle folder, warehouse/bundles/gpu)"
)
QUESTIONS_ONLY_IMPORTS_NOTHING = (
    "import-release --questions-only: writes a question bank and imports nothing; --append "
    "does not apply"
)


def cmd_import_dsg(args: argparse.Namespace) -> int:
    """Convert a DSG release into a bundle (`ingestion.sources.dsg_release`), report its dirty
    rows, then import the bundle exactly as `qct2i import` does."""
    from ingestion.sources.dsg_release import convert_release

    def convert(out: Path):
        answers = [Path(a) for a in args.answers]
        questions, ratings, splits = Path(args.questions), args.ratings, args.split
        return convert_release(questions, answers, out, ratings, args.strict, splits=splits)

    return _convert_and_import(args, convert)


def cmd_import_release(args: argparse.Namespace) -> int:
    """Convert a release folder (`ingestion.sources.releases`) into a bundle, report its dirty
    rows and the rules applied, then import the bundle exactly as `qct2i import` does; with
    --questions-only (formats without answers), write the question bank and stop."""
    from ingestion.sources.releases import QUESTIONS_ONLY, convert_folder

    refusal = _questions_only_refusal(args, QUESTIONS_ONLY)
    if refusal:
        print(refusal, file=sys.stderr)
        return 2

    def convert(out: Path):
        conversion = convert_folder(args.format, Path(args.root), out, args.strict)
        if args.attribute_with:
            conversion.notes.append(_attribute(args, out))
        return conversion

    if args.questions_only:
        return _write_question_bank(Path(args.out), convert)
    return _convert_and_import(args, convert)


def _attribute(args: argparse.Namespace, bundle: Path) -> str:
    """The converted bundle's questions attributed by the causal LM --attribute-with names
    (docs/attribution.md, "By a language model"), loaded from local files only; the summary line."""
    from ingestion.backends.api.attribution_contract import read_definitions
    from ingestion.backends.api.registry import create
    from ingestion.backends.drivers.attribution_runs import (
        default_attribution_cache,
        run_attribution,
    )
    from ingestion.bundle.load import DEFAULT_TAXONOMY_SEED
    from ingestion.bundle.problems import Problem
    from ingestion.sources.release_common import ReleaseError

    class AttributionRefused(ReleaseError):
        release = "attribution"

    definitions = read_definitions(DEFAULT_TAXONOMY_SEED)
    source = args.attribute_with
    name = Path(source).name if Path(source).is_dir() else source
    offline = {"local_files_only": True} if args.attribution_backend == "transformers" else {}
    try:
        attributor = create(
            "attributor",
            args.attribution_backend,
            source=source,
            definitions=definitions,
            model_name=name,
            **offline,
        )
    except OSError as error:  # no such folder, or a hub id not in the local cache
        reason = f"--attribute-with: cannot load the model offline: {error}"
        raise AttributionRefused([Problem(source, None, reason)]) from None
    cache = Path(args.attribution_cache) if args.attribution_cache else default_attribution_cache()
    stats = run_attribution(attributor, bundle, cache, set(definitions), log=lambda _: None)
    return stats.summary(attributor.identity.model)


def _questions_only_refusal(args: argparse.Namespace, questions_only: frozenset) -> str | None:
    if args.format in questions_only and not args.questions_only:
        return ONEIG_NEEDS_QUESTIONS_ONLY
    if args.questions_only and args.format not in questions_only:
        return (
            f"import-release {args.format} --questions-only: --questions-only is for releases "
            f"without answers ({', '.join(sorted(questions_only))}); {args.format} ships its "
            f"judges' answers: import it without --questions-only"
        )
    if args.questions_only and not args.out:
        return QUESTIONS_ONLY_NEEDS_OUT
    if args.questions_only and args.append:
        return QUESTIONS_ONLY_IMPORTS_NOTHING
    return None


def _write_question_bank(out: Path, convert) -> int:
    """`convert(out)`, its summary printed; nothing imported."""
    from ingestion.sources.release_common import ReleaseError
    from ingestion.sources.releases import summary

    try:
        conversion = convert(out)
    except ReleaseError as error:
        print(error, file=sys.stderr)
        return 2
    print("\n".join(summary(conversion)))
    print(
        f"question bank {out}: prompts.jsonl and questions.jsonl for the GPU path "
        "(gpu/generated_images draws from this folder); nothing imported"
    )
    return 0


def _convert_and_import(args: argparse.Namespace, convert) -> int:
    """`convert(out)` into --out (or a temporary folder), its summary printed, then imported."""
    from ingestion.sources.release_common import ReleaseError
    from ingestion.sources.releases import summary
    from qct2i.writer_commands import cmd_import

    with tempfile.TemporaryDirectory(prefix="qct2i-release-") as scratch:
        out = Path(args.out) if args.out else Path(scratch) / "bundle"
        try:
            conversion = convert(out)
        except ReleaseError as error:
            print(error, file=sys.stderr)
            return 2
        print("\n".join(summary(conversion)))
        args.folder, args.replace_model, args.replace_judge = str(out), [], []
        args.image_root = []  # a converted release names no image files
        return cmd_import(args)


def _add_conversion_options(command: argparse.ArgumentParser) -> None:
    """The options every release conversion shares: --strict, --out, --append and --wait."""
    from qct2i.writer_commands import add_wait

    command.add_argument(
        "--strict", action="store_true", help="refuse any dirty row instead of repairing it"
    )
    command.add_argument(
        "--out", help="write the bundle here (absent or empty; default: temporary)"
    )
    command.add_argument("--append", action="store_true", help="as for `qct2i import --append`")
    add_wait(command)


def add_import_dsg(commands) -> None:
    dsg = commands.add_parser(
        "import-dsg", help="convert a DSG release (questions, answers per judge) and import it"
    )
    dsg.add_argument("--questions", required=True, help="the DSG questions CSV (e.g. dsg-1k-anns)")
    dsg.add_argument(
        "--answers",
        action="append",
        required=True,
        metavar="CSV",
        help="one judge's answers CSV, judge id = file name less _dsg (repeatable)",
    )
    dsg.add_argument("--ratings", help="the human Likert ratings CSV (bundle table `ratings`)")
    dsg.add_argument(
        "--split",
        action="append",
        default=[],
        help="keep only this prompt split of the questions file (item ids <split>_<n>, e.g. "
        "tifa160; repeatable; default: every split)",
    )
    _add_conversion_options(dsg)
    dsg.set_defaults(func=cmd_import_dsg)


def add_import_release(commands) -> None:
    release = commands.add_parser(
        "import-release",
        help="convert a release's folder (tiif, dsg) and import it; oneig: --questions-only",
    )
    release.add_argument("format", choices=("tiif", "dsg", "oneig"), help="docs/releases.md")
    release.add_argument("--root", required=True, help="the release's folder (a clone of it)")
    release.add_argument(
        "--questions-only",
        action="store_true",
        help="write the prompts and questions only, as the GPU path's question bank, into "
        "--out; import nothing (oneig, which has no answers)",
    )
    release.add_argument(
        "--attribute-with",
        metavar="SOURCE",
        help="give every question the capability a causal LM attributes (a hub id in the local "
        "cache or a folder; never downloaded), the rules' label kept as rule_capability "
        "(docs/attribution.md)",
    )
    release.add_argument(
        "--attribution-backend",
        choices=("transformers", "vllm"),
        default="transformers",
        help="how --attribute-with runs (default transformers; vllm on GPUs)",
    )
    release.add_argument(
        "--attribution-cache",
        metavar="FILE",
        help="the answers cache (default: attribution_cache.jsonl beside the warehouse)",
    )
    _add_conversion_options(release)
    release.set_defaults(func=cmd_import_release)
