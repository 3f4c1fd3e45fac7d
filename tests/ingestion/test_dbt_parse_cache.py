"""The saved dbt parses (`ingestion.store.dbt_parse`): one entry per warehouse setting, vars and
profile, and no more than the newest `kept` of them."""

from __future__ import annotations

import os
from pathlib import Path

from ingestion.store.dbt_parse import (
    PARTIAL_PARSE,
    cached_parse,
    keep_parse,
    prune_cache,
    seed_parse,
)


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


def test_a_run_is_seeded_from_its_entry_and_leaves_its_parse_there(tmp_path):
    cached, first, second = tmp_path / "cache" / "k.msgpack", tmp_path / "r1", tmp_path / "r2"
    seed_parse(cached, first)  # nothing saved yet: dbt will parse everything
    assert not (first / PARTIAL_PARSE).exists()
    (first / PARTIAL_PARSE).write_bytes(b"the parse of run 1")
    keep_parse(first, cached)
    seed_parse(cached, second)
    assert (second / PARTIAL_PARSE).read_bytes() == b"the parse of run 1"
    assert [p.name for p in cached.parent.iterdir()] == ["k.msgpack"]  # no temporary left


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
