"""Image paths stay inside (CONTRACTS "Additions", image paths): every `images.path` must resolve,
symbolic links followed, inside the bundle folder or inside an image root the caller names, since
the judges open images by that path and reports may show it.

A relative path is taken from the bundle folder, as the judging and transcription runs read it
(`bundle / path`); an absolute one must lie under the bundle folder or an image root. Only where a
path leads is checked: a file that does not exist is accepted, as it always was (a bundle of
judgments whose images were not kept).

The one home of the rule: the import checks a read table (`image_path_problems`), the judging and
transcription runs (`ingestion.backends.drivers.runs`) the rows they read from images.jsonl before
any model is loaded (`path_problems`), so both refuse the same paths with the same words.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow.compute as pc

from ingestion.bundle.problems import COMMAND_LINE, LINE, Problem
from ingestion.bundle.read import ReadTable

_SHOWN_CHARACTERS = 120  # a path is cut in messages beyond this, as ids are beyond 40


def image_root_problems(image_roots: Sequence[Path]) -> list[Problem]:
    """An image root that is not a folder (a misspelt `--image-root`): checking paths against it
    would refuse every image meant for it, so it is reported on its own instead."""
    return [
        Problem(COMMAND_LINE, None, f"image root {_shown(str(root))} is not a folder")
        for root in image_roots
        if not Path(root).is_dir()
    ]


def image_path_problems(
    images: ReadTable, folder: Path, image_roots: Sequence[Path] = ()
) -> list[Problem]:
    """One problem per row of `images` whose `path` leads outside `folder` and every root."""
    rows = images.table.filter(pc.is_valid(images.table["path"]))
    if not rows.num_rows:
        return []
    lines_and_paths = zip(rows[LINE].to_pylist(), rows["path"].to_pylist(), strict=True)
    return path_problems(images.file, lines_and_paths, folder, image_roots)


def path_problems(
    file: str,
    lines_and_paths: Iterable[tuple[int, str]],
    folder: Path,
    image_roots: Sequence[Path] = (),
) -> list[Problem]:
    """One problem (`file`, line, where the path leads) per (line, path) whose path leads outside
    `folder` and every root: the rule on plain rows, for callers that read a file themselves."""
    resolver = _Resolver(os.path.realpath(folder))
    roots = _prefixes([resolver.folder, *(os.path.realpath(root) for root in image_roots)])
    problems = []
    for line, path in lines_and_paths:
        reason = _escape_reason(path, resolver, roots, has_image_roots=bool(image_roots))
        if reason:
            problems.append(Problem(file, line, reason))
    return problems


def _escape_reason(
    path: str, resolver: _Resolver, roots: tuple[str, ...], has_image_roots: bool
) -> str | None:
    """Why `path` may not be opened, or None when it resolves inside one of `roots`."""
    if "\x00" in path:
        return f"path {_shown(path)} holds a NUL character, which no file name can"
    resolved = resolver.resolve(path)
    if _inside(resolved, roots):
        return None
    outside = "the bundle folder and the image roots" if has_image_roots else "the bundle folder"
    lexical = os.path.normpath(os.path.join(resolver.folder, path))  # `..` taken as written
    through = " through a symbolic link" if _inside(lexical, roots) else ""
    target = "" if resolved == path else f", to {_shown(resolved)}"
    hint = "" if has_image_roots else " (name its folder with --image-root DIR to allow it)"
    return f"path {_shown(path)} resolves outside {outside}{through}{target}{hint}"


class _Resolver:
    """Paths resolved as `os.path.realpath` resolves them (symbolic links followed, `..` taken
    after them), each distinct folder resolved once: realpath would check every component of
    every path again, seconds for the images of a paper-scale bundle. The file itself is still
    asked whether it is a link (one `lstat`), unless its folder does not exist."""

    def __init__(self, folder: str):
        self.folder = folder
        self._folders: dict[str, tuple[str, bool]] = {}  # as written -> (resolved, exists)

    def resolve(self, path: str) -> str:
        written_folder, name = os.path.split(path)
        if name in ("", os.curdir, os.pardir):  # not a file of `written_folder`: the slow way
            return os.path.realpath(os.path.join(self.folder, path))
        if written_folder not in self._folders:
            # an absolute `path` replaces the bundle folder in the join
            resolved = os.path.realpath(os.path.join(self.folder, written_folder))
            self._folders[written_folder] = resolved, os.path.isdir(resolved)
        folder, exists = self._folders[written_folder]
        candidate = os.path.join(folder, name)
        return os.path.realpath(candidate) if exists and os.path.islink(candidate) else candidate


def _prefixes(roots: Sequence[str]) -> tuple[str, ...]:
    """Resolved roots as the prefixes of the paths inside them (`/data/` for `/data`, `/` for
    `/`), so that `/database` is not inside `/data`."""
    return tuple(root.rstrip(os.sep) + os.sep for root in roots)


def _inside(path: str, prefixes: tuple[str, ...]) -> bool:
    """Whether the resolved `path` is one of the roots or lies below one."""
    return (path + os.sep).startswith(prefixes)


def _shown(path: str) -> str:
    """A path as JSON (a line break or a control character stays visible), a long one cut short."""
    if len(path) <= _SHOWN_CHARACTERS:
        return json.dumps(path, ensure_ascii=False)
    cut = json.dumps(path[:_SHOWN_CHARACTERS], ensure_ascii=False)
    return f"{cut}... ({len(path):,} characters)"
