"""Prompt shards (a concept's prompts stay together, every prompt in exactly one shard) and the
bundle's locked appends under concurrent writers (each image_id recorded once)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from pathlib import Path

import pytest

from ingestion.backends.drivers.runs import append_rows
from ingestion.backends.drivers.shards import (
    SHARDS_ENV,
    concept_shard,
    prompts_of_shard,
    shard_count_from_env,
)

PROMPTS = [
    {"prompt_id": f"c{i:03d}-{lang}", "concept_id": f"c{i:03d}", "language": lang}
    for i in range(40)
    for lang in ("en", "zh")
]


def test_a_concept_s_shard_is_its_sha256_mod_n():
    # reference: the digest's bytes read as one big-endian integer (hand route, not hexdigest)
    for concept in ("c000", "c001", "概念", "x" * 100):
        digest = hashlib.sha256(concept.encode("utf-8")).digest()
        for n in (1, 2, 3, 8):
            assert concept_shard(concept, n) == int.from_bytes(digest, "big") % n
    # sha256("c000") = 0x...; its last byte decides mod 2 and mod 8 (256 is a multiple of both)
    last = hashlib.sha256(b"c000").digest()[-1]
    assert concept_shard("c000", 2) == last % 2 and concept_shard("c000", 8) == last % 8


@pytest.mark.parametrize("shards", [1, 2, 3, 7])
def test_every_prompt_lands_in_exactly_one_shard_with_its_concept(shards):
    parts = [prompts_of_shard(PROMPTS, s, shards) for s in range(shards)]
    ids = [p["prompt_id"] for part in parts for p in part]
    assert sorted(ids) == sorted(p["prompt_id"] for p in PROMPTS)  # none lost, none twice
    for part in parts:
        concepts = {p["concept_id"] for p in part}
        assert len(part) == 2 * len(concepts)  # both languages of each of its concepts
    if shards > 1:
        assert sum(1 for part in parts if part) > 1  # 40 concepts do spread


def test_bad_shard_counts_and_indices_are_refused(monkeypatch):
    with pytest.raises(ValueError, match="at least 1"):
        concept_shard("c1", 0)
    with pytest.raises(ValueError, match=r"outside 0\.\.1"):
        prompts_of_shard(PROMPTS, 2, 2)
    monkeypatch.setenv(SHARDS_ENV, "two")
    with pytest.raises(ValueError, match=SHARDS_ENV):
        shard_count_from_env()
    monkeypatch.setenv(SHARDS_ENV, "4")
    assert shard_count_from_env() == 4
    monkeypatch.delenv(SHARDS_ENV)
    assert shard_count_from_env() == 1


def test_append_with_a_unique_key_skips_rows_already_recorded(tmp_path):
    path = tmp_path / "images.jsonl"
    assert append_rows(path, [{"image_id": "a"}, {"image_id": "b"}], unique_key="image_id") == 2
    with path.open("a") as f:
        f.write('{"image_id": "tor')  # a crash mid-append
    written = append_rows(path, [{"image_id": "b"}, {"image_id": "c"}], unique_key="image_id")
    assert written == 1
    assert [json.loads(line)["image_id"] for line in path.read_text().splitlines()] == [
        "a",
        "b",
        "c",
    ]


def _append_many(path: str, start: int) -> None:
    for i in range(start, start + 60):  # overlaps the other writer on 30 keys
        append_rows(Path(path), [{"image_id": f"img{i:03d}", "pad": "x" * 500}], "image_id")


def test_concurrent_writers_record_each_image_once(tmp_path):
    """Two processes (two shards, or a shard and its rerun) append overlapping ids at once."""
    path = tmp_path / "images.jsonl"
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_append_many, args=(str(path), s)) for s in (0, 30)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(120)
        assert w.exitcode == 0
    ids = [json.loads(line)["image_id"] for line in path.read_text().splitlines()]
    assert sorted(ids) == [f"img{i:03d}" for i in range(90)]
