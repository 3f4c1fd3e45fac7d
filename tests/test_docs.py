"""The docs (issue 22): README.md is a map of at most 200 lines that opens with `make demo` and
`make test`; README.md and docs/*.md link only to files of the repository and point nowhere
outside it (a clone of the public repository is all a reader has); docs/refusals.md lists every
refusal of the bad-input catalogue with its message.

Each check is a function of a repository root, so every test also runs it on a scratch copy with
one thing broken, and shows that the check fails there.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

from tests.ingestion.bundle.test_bad_input import CATALOGUE

PROJECT_ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 200
README_HEAD_LINES = 15
README_COMMANDS = ("make demo", "make test")
REFUSALS_PAGE = Path("docs") / "refusals.md"

FENCED_BLOCK = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
# [text](target) and ![alt](target), with an optional "title"
LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IGNORED_LINK = re.compile(r"(https?://|mailto:|#)", re.IGNORECASE)
# Text that names a place outside the repository: the shared folder beside the checkout, the
# machine it was written on.
OUTSIDE_MARKERS = ("../shared", "shared/spec/", "shared/data/", "shared/paper/", "/work/")
# A path that climbs (`../x`, `../../x`), in prose or code, wherever it stands.
CLIMBING_PATH = re.compile(r"(?<![\w.])(?:\.\./)+[\w.\-/]*")


def doc_files(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _inside(root: Path, path: str) -> bool:
    """Whether `path` lies in `root`, judged on the path's text (as a browser resolves a link),
    not on where symbolic links lead."""
    top = os.path.abspath(root)
    return os.path.commonpath([top, os.path.abspath(path)]) == top


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _blank(match: re.Match) -> str:
    """The match as spaces, its line ends kept, so offsets still give line numbers."""
    return re.sub(r"[^\n]", " ", match.group())


def link_targets(text: str) -> list[tuple[int, str]]:
    """(line, target) of every markdown link outside code blocks and code spans."""
    prose = CODE_SPAN.sub(_blank, FENCED_BLOCK.sub(_blank, text))
    return [(_line(prose, m.start()), m.group(1)) for m in LINK.finditer(prose)]


def link_problems(root: Path) -> list[str]:
    """Every relative link that does not name an existing file or folder of the repository."""
    problems = []
    for doc in doc_files(root):
        name = doc.relative_to(root)
        for line, target in link_targets(doc.read_text(encoding="utf-8")):
            if IGNORED_LINK.match(target):
                continue
            path = unquote(target.split("#", 1)[0].split("?", 1)[0])
            where = f"{name}:{line}: ({target})"
            if os.path.isabs(path):
                problems.append(f"{where} is an absolute path")
            elif not _inside(root, os.path.normpath(doc.parent / path)):
                problems.append(f"{where} points outside the repository")
            elif not (doc.parent / path).exists():
                problems.append(f"{where} names no file or folder")
    return problems


def outside_references(root: Path) -> list[str]:
    """Every link or inline path, in prose or code, that leads outside the repository."""
    problems = []
    for doc in doc_files(root):
        name = doc.relative_to(root)
        text = doc.read_text(encoding="utf-8")
        for marker in OUTSIDE_MARKERS:
            for m in re.finditer(re.escape(marker), text):
                problems.append(
                    f"{name}:{_line(text, m.start())}: {marker!r} is outside the repository"
                )
        for m in CLIMBING_PATH.finditer(text):
            if not _inside(root, os.path.normpath(doc.parent / m.group())):
                problems.append(f"{name}:{_line(text, m.start())}: {m.group()!r} climbs out of it")
    return problems


def readme_problems(root: Path) -> list[str]:
    lines = (root / "README.md").read_text(encoding="utf-8").splitlines()
    problems = []
    if len(lines) > README_MAX_LINES:
        problems.append(f"README.md has {len(lines)} lines; a map has at most {README_MAX_LINES}")
    head = "\n".join(lines[:README_HEAD_LINES])
    problems += [
        f"`{command}` is not within README.md's first {README_HEAD_LINES} lines"
        for command in README_COMMANDS
        if command not in head
    ]
    return problems


def missing_refusals(root: Path) -> list[str]:
    """The catalogue entries whose reason the refusal page's table lacks (`|` escaped, as a
    markdown table cell holds it)."""
    page = (root / REFUSALS_PAGE).read_text(encoding="utf-8")
    table = "\n".join(line for line in page.splitlines() if line.lstrip().startswith("|"))
    return [r.name for r in CATALOGUE if r.reason.replace("|", "\\|") not in table]


def scratch_copy(tmp_path: Path) -> Path:
    """A copy of README.md and docs/ in a scratch root where every other entry of the project is
    a symbolic link, so the copy's links resolve as the real ones do."""
    root = tmp_path / "repo"
    root.mkdir(parents=True)
    shutil.copy(PROJECT_ROOT / "README.md", root / "README.md")
    shutil.copytree(PROJECT_ROOT / "docs", root / "docs")
    for entry in PROJECT_ROOT.iterdir():
        if entry.name not in {"README.md", "docs", ".git", ".venv"}:
            (root / entry.name).symlink_to(entry)
    return root


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# ------------------------------------------------------------------------------------------------


def test_every_relative_link_names_a_file_of_the_repository(tmp_path):
    scratch = scratch_copy(tmp_path)
    assert link_problems(scratch) == []
    readme = scratch / "README.md"
    text = readme.read_text(encoding="utf-8")
    line, target = next((line, t) for line, t in link_targets(text) if not IGNORED_LINK.match(t))
    broken = target.split("#", 1)[0] + ".missing"
    readme.write_text(text.replace(f"({target})", f"({broken})", 1), encoding="utf-8")
    assert link_problems(scratch) == [f"README.md:{line}: ({broken}) names no file or folder"]

    # fragments are stripped, web links, mail and anchors ignored, code is not a link
    _write(tmp_path / "t" / "docs" / "a.md", "[b](b.md#part) [b](./b.md) [x](#here)\n")
    _write(tmp_path / "t" / "docs" / "b.md", "[a](a.md) [w](https://example.org/x) `[c](c.md)`\n")
    _write(tmp_path / "t" / "README.md", "[d](docs/) [m](mailto:a@b.c)\n```\n[c](c.md)\n```\n")
    assert link_problems(tmp_path / "t") == []
    _write(tmp_path / "t" / "docs" / "b.md", "[c](c.md#part)\n[e](/etc/passwd)\n")
    assert link_problems(tmp_path / "t") == [
        "docs/b.md:1: (c.md#part) names no file or folder",
        "docs/b.md:2: (/etc/passwd) is an absolute path",
    ]

    assert link_problems(PROJECT_ROOT) == []


def test_nothing_points_outside_the_repository(tmp_path):
    # a file that exists beside the repository is still outside it
    _write(tmp_path / "shared" / "spec" / "METHOD.md", "the spec\n")
    root = tmp_path / "hand"
    _write(root / "README.md", "# map\n\nThe spec: [METHOD](../shared/spec/METHOD.md).\n")
    _write(root / "docs" / "a.md", "[up](../README.md), `../i2` is an id\n")
    assert outside_references(root) == [
        "README.md:3: '../shared' is outside the repository",
        "README.md:3: 'shared/spec/' is outside the repository",
        "README.md:3: '../shared/spec/METHOD.md' climbs out of it",
    ]
    assert link_problems(root) == [
        "README.md:3: (../shared/spec/METHOD.md) points outside the repository"
    ]
    _write(root / "README.md", "# map\n")
    _write(root / "docs" / "a.md", "```\nqct2i import-dsg --questions ../../data/dsg.csv\n```\n")
    assert outside_references(root) == ["docs/a.md:2: '../../data/dsg.csv' climbs out of it"]

    scratch = scratch_copy(tmp_path / "copy")
    assert outside_references(scratch) == []
    readme = scratch / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines()
    readme.write_text("\n".join([*lines, "The data: `../shared/data/dsg`."]), encoding="utf-8")
    n = len(lines) + 1
    assert outside_references(scratch) == [
        f"README.md:{n}: '../shared' is outside the repository",
        f"README.md:{n}: 'shared/data/' is outside the repository",
        f"README.md:{n}: '../shared/data/dsg' climbs out of it",
    ]

    assert outside_references(PROJECT_ROOT) == []


def test_the_readme_is_a_map_that_opens_with_make_demo_and_make_test(tmp_path):
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()

    scratch = tmp_path / "repo"
    _write(scratch / "README.md", readme + "\n" * (README_MAX_LINES + 1 - len(lines)))
    assert readme_problems(scratch) == [
        f"README.md has {README_MAX_LINES + 1} lines; a map has at most {README_MAX_LINES}"
    ]
    pushed_down = "\n" * README_HEAD_LINES + readme
    _write(scratch / "README.md", pushed_down)
    assert readme_problems(scratch) == [
        f"`make demo` is not within README.md's first {README_HEAD_LINES} lines",
        f"`make test` is not within README.md's first {README_HEAD_LINES} lines",
    ]

    assert readme_problems(PROJECT_ROOT) == []


def test_the_refusal_page_lists_every_refusal_with_its_message(tmp_path):
    page = (PROJECT_ROOT / REFUSALS_PAGE).read_text(encoding="utf-8")
    first = CATALOGUE[0]
    cell = first.reason.replace("|", "\\|")
    # the reason's table row taken out, the reason kept in prose below the table: not listed
    rows = page.splitlines()
    kept = [row for row in rows if not (row.startswith("|") and cell in row)]
    assert len(kept) < len(rows)
    _write(tmp_path / REFUSALS_PAGE, "\n".join(kept) + f"\n\n{cell}\n")
    missing = missing_refusals(tmp_path)
    assert first.name in missing

    assert missing_refusals(PROJECT_ROOT) == []
