"""The release formats `qct2i import-release FORMAT --root DIR` converts, each from a folder laid
out as the release's own repository is, and the summary a conversion prints. A format of
`QUESTIONS_ONLY` (`oneig`: a release without answers) converts into a question bank for the GPU
path (`--questions-only --out DIR`), which is written, never imported."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ingestion.bundle import Problem
from ingestion.sources import dsg_release, oneig_release, tiif_release
from ingestion.sources.release_common import Conversion, DirtyRow, ReleaseError

# (root, out, strict) -> the conversion
FORMATS: dict[str, Callable[[Path, Path, bool], Conversion]] = {
    "tiif": tiif_release.convert_tiif,
    "dsg": dsg_release.convert_release_root,
    "oneig": oneig_release.convert_oneig_questions,
}
# formats whose release has no answers: converted only with --questions-only, never imported
QUESTIONS_ONLY = frozenset({"oneig"})


# the paths each release's clone holds, as its converter reads them (docs/releases.md)
LAYOUTS: dict[str, tuple[Path, ...]] = {
    "tiif": (tiif_release.PROMPTS_DIR, tiif_release.RESULTS_DIR),
    "dsg": (dsg_release.ROOT_QUESTIONS, dsg_release.ROOT_ANSWERS),
    "oneig": (Path(oneig_release.PROMPT_FILES["en"]), oneig_release.QD_DIR),
}


def format_of(root: Path) -> str | None:
    """The release format whose layout `root` holds (every path its converter starts from), or
    None: how the Dagster inbox recognises a release folder dropped into it."""
    for name, paths in LAYOUTS.items():
        if all((Path(root) / path).exists() for path in paths):
            return name
    return None


class FormatNotReady(ReleaseError):
    """A format name that no converter reads."""

    release = "import-release"


def convert_folder(name: str, root: Path, out: Path, strict: bool = False) -> Conversion:
    """The release folder `root` in format `name` as a bundle in `out` (ReleaseError, listing
    every problem, if it cannot be)."""
    if name not in FORMATS:
        reason = f"format {name!r} is not converted yet (formats: {', '.join(FORMATS)})"
        raise FormatNotReady([Problem(name, None, reason)])
    return FORMATS[name](Path(root), Path(out), strict)


def summary(conversion: Conversion) -> list[str]:
    """What `qct2i import-release` prints of a conversion: every dirty class's count with one
    example of each class found, the rules applied, the rows of other prompt splits, and the
    bundle's tables."""
    counts = conversion.dirty_counts()
    classes = conversion.dirty_classes or tuple(sorted(counts))
    first: dict[str, DirtyRow] = {}
    for row in conversion.dirty + conversion.applied:
        first.setdefault(row.dirty_class, row)
    lines = ["dirty rows: " + ", ".join(f"{name}={counts[name]}" for name in classes)]
    lines += [f"  e.g. {first[name].problem()}" for name in classes if name in counts]
    applied = conversion.applied_counts()
    if applied:
        lines.append("rules applied: " + ", ".join(f"{k}={n}" for k, n in sorted(applied.items())))
        lines += [f"  e.g. {first[name].problem()}" for name in sorted(applied)]
    if conversion.out_of_scope:
        lines.append(f"skipped {conversion.out_of_scope} {conversion.out_of_scope_what}")
    lines += conversion.notes
    tables = ", ".join(f"{name}={n}" for name, n in conversion.counts.items())
    return [*lines, f"bundle {conversion.folder} ({tables})"]
