"""A release's manifest checked against its folder (`ingestion.bundle.manifest`), on folders
written here: every way a folder can differ, each with its reason, in the documented order.
Written for the mutants no unit test reached (issue 36); `qct2i export` and the import's refusal
are tested end to end in tests/qct2i."""

from __future__ import annotations

import hashlib
import json

import pytest

from ingestion.bundle.manifest import (
    MANIFEST_FORMAT,
    ManifestUnreadable,
    file_sha256,
    has_manifest,
    manifest_problems,
    read_manifest,
)

OLD, NEW = b"old\n", b"new\n"  # a file's bytes when released, and now


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _release(folder, files: dict[str, bytes], listed: dict[str, str] | None = None) -> None:
    """Write `files` and a manifest listing `listed` (name: sha256; default: every file's)."""
    folder.mkdir(exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    listed = {n: _sha(d) for n, d in files.items()} if listed is None else listed
    entries = {n: {"table": n.split(".")[0], "rows": 1, "sha256": s} for n, s in listed.items()}
    manifest = {"format": MANIFEST_FORMAT, "files": entries}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_a_files_checksum_is_sha256_of_its_bytes(tmp_path):
    for data in (b"", b"abc", bytes(range(256)) * 5000):  # the last over a 1 MiB chunk
        (tmp_path / "f").write_bytes(data)
        assert file_sha256(tmp_path / "f") == _sha(data)


def test_a_matching_folder_and_a_folder_without_a_manifest_have_no_problems(tmp_path):
    assert not has_manifest(tmp_path) and manifest_problems(tmp_path) == []
    _release(tmp_path, {"prompts.jsonl": b"{}\n", "images.jsonl": b""})
    assert has_manifest(tmp_path) and manifest_problems(tmp_path) == []
    assert set(read_manifest(tmp_path)["files"]) == {"prompts.jsonl", "images.jsonl"}


def test_every_difference_is_named_listed_files_by_name_then_unlisted_ones(tmp_path):
    """Guards each check and its order: a changed file (both checksums named), a missing one, a
    name with a folder in it, files the manifest lacks (sorted), the manifest itself never."""
    files = {"b.jsonl": NEW, "z.jsonl": b"", "y.jsonl": b""}
    listed = {
        "b.jsonl": _sha(OLD),
        "a.jsonl": _sha(b""),
        "../c.jsonl": _sha(b""),
        "d/e.jsonl": _sha(b""),
    }
    _release(tmp_path, files, listed)
    assert manifest_problems(tmp_path) == [
        ("../c.jsonl", "manifest.json names a path outside the release folder"),
        ("a.jsonl", "listed in manifest.json but missing"),
        (
            "b.jsonl",
            f"changed since the release was written: SHA-256 expected {_sha(OLD)} "
            f"(manifest.json), actual {_sha(NEW)}",
        ),
        ("d/e.jsonl", "manifest.json names a path outside the release folder"),
        ("y.jsonl", "not listed in manifest.json (a release holds only the files it lists)"),
        ("z.jsonl", "not listed in manifest.json (a release holds only the files it lists)"),
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{not json", "cannot be read as JSON ("),
        ('{"format": "other/2", "files": {}}', "format is 'other/2'; this version reads "),
        ("[1]", "format is None; this version reads "),
        (json.dumps({"format": MANIFEST_FORMAT, "files": []}), "`files` must map each file"),
        (json.dumps({"format": MANIFEST_FORMAT}), "`files` must map each file"),
        (
            json.dumps({"format": MANIFEST_FORMAT, "files": {"a": {"sha256": 1}}}),
            "`files` must map each file",
        ),
        (json.dumps({"format": MANIFEST_FORMAT, "files": {"a": "x"}}), "`files` must map each"),
    ],
)
def test_a_manifest_that_cannot_be_used_is_one_problem_saying_why(tmp_path, text, reason):
    (tmp_path / "manifest.json").write_text(text, encoding="utf-8")
    with pytest.raises(ManifestUnreadable) as unreadable:
        read_manifest(tmp_path)
    assert str(unreadable.value).startswith(reason)
    [(name, problem)] = manifest_problems(tmp_path)
    assert (name, problem) == ("manifest.json", str(unreadable.value))
