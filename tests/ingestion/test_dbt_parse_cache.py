"""The saved dbt parses (`ingestion.store.dbt_parse`): one entry per warehouse setting, vars and
profile, and no more than the newest `kept` of them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ingestion.store import dbt_parse
from ingestion.store.dbt_parse import PARTIAL_PARSE, cached_parse, prune_cache, reused_parse


def test_an_entry_is_keyed_by_the_warehouse_setting_the_vars_and_the_profile():
    profiles = Path("/project")
    entry = cached_parse("/w/qct2i.duckdb.building", ["build", "--vars", '{"a": 1}'], profiles)
    assert entry == cached_parse("/w/qct2i.duckdb.building", ["--vars", '{"a": 1}'], profiles)
    others = [
        cached_parse("/v/qct2i.duckdb.building", ["--vars", '{"a": 1}'], profiles),
        cached_parse("/w/qct2i.duckdb.building", ["--vars", '{"a": 2}'], profiles),
        cached_parse("/w/qct2i.duckdb.building", ["build"], profiles),
        cached_parse("/w/qct2i.duckdb.building", ["--vars", '{"a": 1}'], Path("/elsewhere")),
    ]
    assert entry not in others and len(set(others)) == len(others)


def test_a_run_is_seeded_from_its_entry_and_leaves_its_parse_there_even_if_it_fails(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(dbt_parse, "PARTIAL_PARSE_CACHE", tmp_path / "cache")
    first, second, profiles = tmp_path / "r1", tmp_path / "r2", Path("/project")
    with reused_parse("w.duckdb", (), profiles, first):
        assert not (first / PARTIAL_PARSE).exists()  # nothing saved yet: dbt parses everything
        (first / PARTIAL_PARSE).write_bytes(b"the parse of run 1")
    with pytest.raises(RuntimeError), reused_parse("w.duckdb", (), profiles, second):
        assert (second / PARTIAL_PARSE).read_bytes() == b"the parse of run 1"
        (second / PARTIAL_PARSE).write_bytes(b"the parse of run 2")
        raise RuntimeError("a test failed after dbt had parsed")
    entry = cached_parse("w.duckdb", (), profiles)
    assert entry.parent == tmp_path / "cache"
    assert [p.name for p in entry.parent.iterdir()] == [entry.name]  # no temporary left
    assert entry.read_bytes() == b"the parse of run 2"


def test_pruning_keeps_the_most_recently_written_entries(tmp_path):
    for age in range(5):  # e4 the oldest
        entry = tmp_path / f"e{age}.msgpack"
        entry.write_bytes(b"parse")
        os.utime(entry, (1_000_000 - age * 60, 1_000_000 - age * 60))
    (tmp_path / "notes.txt").write_text("not an entry")
    prune_cache(tmp_path, kept=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "e0.msgpack",
        "e1.msgpack",
        "e2.msgpack",
        "notes.txt",
    ]
