"""The manifest of an evidence release (`qct2i export DIR`): which files the release holds and
the SHA-256 of each, so that an import can prove it reads exactly what the exporter wrote.

`manifest.json` sits beside the bundle's files. Its `files` object maps every file of the folder
(the manifest excepted) to `{"table", "rows", "sha256"}`; the rest of the manifest (code version,
judges, generators, seeds, mart hashes) describes the release and is written by `qct2i export`
(qct2i/evidence_release.py). A bundle without a manifest imports as any bundle does.

Verification refuses a release whose folder differs from its manifest in any way: a file
changed (its checksum differs), missing, or added. Every difference is listed; none is repaired.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

MANIFEST_NAME = "manifest.json"
MANIFEST_FORMAT = "qct2i-evidence-release/1"
_CHUNK_BYTES = 1 << 20


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file's bytes, as 64 lowercase hex digits, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def has_manifest(folder: Path) -> bool:
    return (Path(folder) / MANIFEST_NAME).exists()


def read_manifest(folder: Path) -> dict:
    """The parsed manifest of `folder`, or ManifestUnreadable saying why it cannot be used."""
    path = Path(folder) / MANIFEST_NAME
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ManifestUnreadable(f"cannot be read as JSON ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else None
        raise ManifestUnreadable(f"format is {found!r}; this version reads {MANIFEST_FORMAT!r}")
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(_is_entry(entry) for entry in files.values()):
        raise ManifestUnreadable("`files` must map each file name to an object with a `sha256`")
    return manifest


class ManifestUnreadable(ValueError):
    """manifest.json exists but is not a manifest this version can verify against."""


def _is_entry(entry: object) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("sha256"), str)


def manifest_problems(folder: Path) -> list[tuple[str, str]]:
    """(file, reason) for every way `folder` differs from its manifest; [] when it matches or has
    no manifest. Listed files are checked in name order, then the files the manifest lacks."""
    folder = Path(folder)
    if not has_manifest(folder):
        return []
    try:
        files = read_manifest(folder)["files"]
    except ManifestUnreadable as error:
        return [(MANIFEST_NAME, str(error))]
    problems = [
        (name, reason)
        for name in sorted(files)
        if (reason := _listed_file_problem(folder, name, files[name]["sha256"]))
    ]
    problems += [
        (name, f"not listed in {MANIFEST_NAME} (a release holds only the files it lists)")
        for name in sorted(set(_folder_entries(folder)) - set(files) - {MANIFEST_NAME})
    ]
    return problems


def _listed_file_problem(folder: Path, name: str, expected: str) -> str | None:
    path = folder / name
    if Path(name).name != name:  # a manifest may only name files of its own folder
        return f"{MANIFEST_NAME} names a path outside the release folder"
    if not path.is_file():
        return f"listed in {MANIFEST_NAME} but missing"
    actual = file_sha256(path)
    if actual != expected:
        return (
            f"changed since the release was written: SHA-256 expected {expected} "
            f"({MANIFEST_NAME}), actual {actual}"
        )
    return None


def _folder_entries(folder: Path) -> Iterator[str]:
    return (entry.name for entry in folder.iterdir())
