"""What the converters of public releases share (`dsg_release`, `tiif_release`, `oneig_release`):
the dirty row, the conversion's result, the refusal listing every problem, DSG's rules for listed
parents (`listed_parents`, `break_cycles`), and the bundle's `conversion_report` table, written
only when nothing refuses the release (nothing is ever half-written)."""

from __future__ import annotations

import csv
import json
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx

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
    # what the summary calls the rows counted in `out_of_scope`
    out_of_scope_what: str = "answers and ratings of prompt splits not in the questions"
    notes: list[str] = field(default_factory=list)  # more lines for the summary (counts, ...)

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
    conversion = Conversion(out, counts, dirty, out_of_scope, applied, dirty_classes)
    conversion.notes.append(attribution_note(tables.get("questions", [])))
    return conversion


def attribution_note(questions: list[dict]) -> str:
    """How the questions' capabilities were attributed, by `capability_source`'s kind
    (docs/attribution.md): the share left to a default is what no rule read."""
    kinds = Counter((q.get("capability_source") or "unknown").split(":")[0] for q in questions)
    total = sum(kinds.values()) or 1
    said = ", ".join(
        f"{kinds[kind]:,} {label}"
        for kind, label in (("release", "the release's own label"), ("rule", "by a rule"))
        if kinds[kind]
    )
    defaults = f"{kinds['default']:,} by a default ({100 * kinds['default'] / total:.1f} %)"
    return f"capabilities: {', '.join(filter(None, (said, defaults)))}"


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


# --------------------------------------------------------------------------------------------------
# Listed parents (DSG's rules; OneIG's dependencies follow them too)
# --------------------------------------------------------------------------------------------------

Where = tuple[str, int | None]  # (file, line) of a question's parents, for its dirty rows


def listed_parents(
    child: str,
    tokens: Iterable[str],
    ids: set[str],
    where: Where,
    dirty: list[DirtyRow],
    label: str = "",
    report_repeats: bool = False,
    unit: str = "item",
) -> list[str]:
    """The numeric, existing, non-self parents of question `child` in listed order (`0` = a
    root, skipped); the rest reported at `where` (`parent_in_words`, `self_loop`,
    `missing_parent` and, with `report_repeats`, `duplicate_parent`). `label` starts every
    reason (e.g. the prompt's id); `unit` names what holds the questions."""
    parents: list[str] = []
    for token in (t.strip() for t in tokens):
        if not token.isdigit():
            reason = f"{label}parent {token!r} of question {child} is not a number; dropped"
            dirty.append(DirtyRow(*where, "parent_in_words", "repaired", reason))
        elif token == "0":
            continue
        elif token in parents:
            if report_repeats:
                reason = f"{label}question {child} lists parent {token} twice; kept once"
                dirty.append(DirtyRow(*where, "duplicate_parent", "repaired", reason))
        elif token == child:
            reason = f"{label}question {child} lists itself as parent; dropped"
            dirty.append(DirtyRow(*where, "self_loop", "repaired", reason))
        elif token not in ids:
            reason = f"{label}parent {token} of question {child} is no question of the {unit}"
            reason += "; dropped"
            dirty.append(DirtyRow(*where, "missing_parent", "repaired", reason))
        else:
            parents.append(token)
    return parents


def break_cycles(
    listed: Mapping[str, list[str]],
    where_of: Mapping[str, Where],
    dirty: list[DirtyRow],
    label: str = "",
) -> dict[str, list[str]]:
    """Add edges child by child (numeric id order), parents in listed order; drop an edge whose
    parent is already reachable from the child (it would close a cycle), reported as `cycle` at
    the child's `where_of`."""
    graph = nx.DiGraph()  # parent -> child, the edges kept so far
    graph.add_nodes_from(listed)
    kept: dict[str, list[str]] = {}
    for child in sorted(listed, key=int):
        kept[child] = []
        for parent in listed[child]:
            if nx.has_path(graph, child, parent):
                reason = f"{label}edge {parent} -> {child} closes a cycle; dropped"
                dirty.append(DirtyRow(*where_of[child], "cycle", "repaired", reason))
                continue
            kept[child].append(parent)
            graph.add_edge(parent, child)
    return kept


# --------------------------------------------------------------------------------------------------
# Reading: CSV rows and JSON objects with their lines
# --------------------------------------------------------------------------------------------------


def csv_rows(root: Path, rel: str, columns: tuple[str, ...], problems) -> list[tuple[int, dict]]:
    """The rows of the CSV `root / rel` with the physical line each starts on (header = line 1;
    quoted fields may span lines); a missing column or an unreadable file is a problem."""
    try:
        with (root / rel).open(newline="", encoding="utf-8") as handle:
            reader = csv.reader(handle)
            header = next(reader, None) or []
            missing = [c for c in columns if c not in header]
            if missing:
                problems.append(Problem(rel, 1, f"missing column(s) {', '.join(missing)}"))
                return []
            rows, start = [], reader.line_num + 1
            for record in reader:
                rows.append((start, dict(zip(header, record, strict=False))))
                start = reader.line_num + 1
            return rows
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        problems.append(Problem(rel, None, f"cannot read: {error}"))
        return []


_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class JsonMembers:
    """A JSON text whose objects can be read member by member, each with its 1-based line."""

    def __init__(self, text: str):
        self.text = text
        self.newlines = [at for at, char in enumerate(text) if char == "\n"]

    def line(self, at: int) -> int:
        return bisect_left(self.newlines, at) + 1

    def _skip(self, at: int) -> int:
        return _SPACE.match(self.text, at).end()

    def members(self, at: int = 0) -> list[tuple[str, int, object, int]]:
        """(key, line, value, where the value starts) of the object at `at`, in order, repeated
        keys kept; ValueError if it is not an object."""
        text, at = self.text, self._skip(at)
        if text[at : at + 1] != "{":
            raise ValueError(f"line {self.line(at)}: not a JSON object")
        at, members = self._skip(at + 1), []
        if text[at : at + 1] == "}":
            return members
        while True:
            if text[at : at + 1] != '"':
                raise ValueError(f"line {self.line(at)}: expected a key")
            key, end = json.decoder.scanstring(text, at + 1)
            line, end = self.line(at), self._skip(end)
            if text[end : end + 1] != ":":
                raise ValueError(f"line {self.line(end)}: expected ':'")
            start = self._skip(end + 1)
            value, end = _DECODER.raw_decode(text, start)
            members.append((key, line, value, start))
            at = self._skip(end)
            if text[at : at + 1] == ",":
                at = self._skip(at + 1)
            elif text[at : at + 1] == "}":
                return members
            else:
                raise ValueError(f"line {self.line(at)}: expected ',' or '}}'")


def json_pairs(value: object) -> list[tuple[str, object]] | None:
    """The members of a JSON string holding an object, in order, repeats kept; else None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value, object_pairs_hook=lambda pairs: pairs)
    except json.JSONDecodeError:
        return None
    return (
        parsed if isinstance(parsed, list) and all(isinstance(p, tuple) for p in parsed) else None
    )
