"""What the converters of public releases share (`dsg_release`, `tiif_release`): the dirty row, the
conversion's result, the refusal listing every problem, and the bundle's `conversion_report`
table, written only when nothing refuses the release (nothing is ever half-written)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ingestion.bundle import Problem
from ingestion.bundle.format import write_bundle

REPORT_FILE = "conversion_report.jsonl"  # the bundle table `conversion_report`


@dataclass(frozen=True)
class DirtyRow:
    """One repaired or dropped thing: where, which class, what was done, why."""

    file: str
    line: int
    dirty_class: str
    action: str  # "repaired" or "dropped" (the bundle's `conversion_report.action`)
    reason: str

    def problem(self) -> Problem:
        return Problem(self.file, self.line, f"{self.dirty_class}: {self.reason}")


class ReleaseError(Exception):
    """The release cannot be converted (or, strict, has dirty rows); lists every problem."""

    release = "release"  # how the message names it

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        listed = "\n".join(str(problem) for problem in problems)
        super().__init__(f"{self.release} refused ({len(problems)} problems):\n{listed}")


@dataclass
class Conversion:
    folder: Path
    counts: dict[str, int]
    dirty: list[DirtyRow] = field(default_factory=list)
    # answers and ratings rows of other prompt splits (not dirty: a file holds several releases)
    out_of_scope: int = 0
    # What a stated rule made of the release where it says nothing (an answer turned to
    # target-yes, a derived parent): in the report beside the dirty rows, never refused.
    applied: list[DirtyRow] = field(default_factory=list)
    dirty_classes: tuple[str, ...] = ()  # every class its converter knows, in report order

    def dirty_counts(self) -> Counter:
        return Counter(row.dirty_class for row in self.dirty)

    def applied_counts(self) -> Counter:
        return Counter(row.dirty_class for row in self.applied)


def refuse_unless_empty(out: Path, error: type[ReleaseError]) -> None:
    if out.exists() and any(out.iterdir()):
        raise error([Problem(str(out), None, "output folder is not empty")])


def write_conversion(
    out: Path,
    tables: Mapping[str, list[dict]],
    dirty: Iterable[DirtyRow],
    problems: list[Problem],
    strict: bool,
    error: type[ReleaseError],
    applied: Iterable[DirtyRow] = (),
    out_of_scope: int = 0,
    dirty_classes: tuple[str, ...] = (),
) -> Conversion:
    """Refuse with every problem (and, `strict`, every dirty row), or write the bundle with its
    `conversion_report`: the dirty rows, then the rules applied."""
    dirty = list(dict.fromkeys(dirty))  # a thing found twice is one repair (the report's key)
    applied = list(dict.fromkeys(applied))
    if strict:
        problems = problems + [row.problem() for row in dirty]
    if problems:
        raise error(problems)
    tables = {**tables, "conversion_report": report_rows(dirty + applied)}
    write_bundle(out, tables)
    counts = {name: len(rows) for name, rows in tables.items()}
    return Conversion(out, counts, dirty, out_of_scope, applied, dirty_classes)


def report_rows(rows: Iterable[DirtyRow]) -> list[dict]:
    """The bundle's `conversion_report` table: every repair, drop and rule applied."""
    return [
        {
            "source_file": row.file,
            "line": row.line,
            "dirty_class": row.dirty_class,
            "action": row.action,
            "reason": row.reason,
        }
        for row in rows
    ]
