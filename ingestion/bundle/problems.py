"""Why a bundle is refused: one `Problem` per offending file or line, all of them in one
`BundleError`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

LINE = "_line"  # internal column: the row's 1-based line (JSONL) or row (Parquet) number
COMMAND_LINE = "(command line)"  # the `file` of a problem with what the caller named, not a file


@dataclass(frozen=True)
class Problem:
    """One reason to refuse a bundle: the file (the table, if no file) and the 1-based line."""

    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.reason}"


class BundleError(Exception):
    """A bundle was refused; `problems` lists every problem found, in file and line order."""

    def __init__(self, folder: Path, problems: list[Problem]):
        self.folder = folder
        self.problems = problems
        listed = "\n".join(str(problem) for problem in problems)
        super().__init__(f"bundle {folder} refused ({len(problems)} problems):\n{listed}")
