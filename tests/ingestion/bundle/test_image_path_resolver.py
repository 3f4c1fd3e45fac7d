"""The image-path resolver's shortcut (`ingestion.bundle.image_paths._Resolver`): a path whose
last part is not a file name (`img/`, `.`, `..`) is resolved the slow way, as `realpath` would.
Holes `make mutation` found (issue 36); expected paths written by hand from tmp_path."""

from __future__ import annotations

import os

from ingestion.bundle.image_paths import _prefixes, _Resolver, path_problems


def test_a_path_ending_in_two_dots_is_resolved_where_it_leads(tmp_path):
    """Guards the slow way for `..`: `a/../..` leads to the bundle's parent, not to the
    unnormalised `bundle/..` (which starts with `bundle/` and would read as inside)."""
    bundle = tmp_path.resolve() / "bundle"
    (bundle / "a").mkdir(parents=True)
    resolver = _Resolver(str(bundle))
    assert resolver.resolve("a/../..") == str(tmp_path.resolve())
    assert resolver.resolve("a/.") == str(bundle / "a")
    problems = path_problems("images.jsonl", [(4, "a/../..")], bundle)
    assert [(p.line, p.reason.split(" resolves")[0]) for p in problems] == [(4, 'path "a/../.."')]


def test_a_path_ending_in_a_slash_is_its_folder_without_the_slash(tmp_path):
    """Guards the slow way for an empty last part: `img/` is the folder `bundle/img`, as
    `realpath` gives it, not `bundle/img/`."""
    bundle = tmp_path.resolve() / "bundle"
    (bundle / "img").mkdir(parents=True)
    resolved = _Resolver(str(bundle)).resolve("img/")
    assert resolved == str(bundle / "img")
    assert not resolved.endswith(os.sep)


def test_a_root_is_a_prefix_with_one_separator_and_its_other_characters_kept():
    """Guards `_prefixes`: only separators are stripped before one is added (the file-system
    root `/` stays `/`, not `//`, which no resolved path starts with; a folder name ending in a
    space keeps it)."""
    assert _prefixes(["/", "/data", "/a b "]) == ("/", "/data/", "/a b /")
