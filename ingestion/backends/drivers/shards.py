"""Prompt shards: one generator's prompts split into N disjoint parts, so N GPUs draw it at once.

A concept's shard is sha256(concept_id) mod N: stable across processes, machines and Python
versions (unlike `hash()`, which is salted per process), and keyed on the concept, so both
languages of a concept (which share a seed, METHOD's paired design) land in the same shard and
on the same device. Every prompt is in exactly one shard, whatever N is.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable

SHARDS_ENV = "QCT2I_GENERATION_SHARDS"  # how many prompt shards per generator (default 1)


def shard_count_from_env() -> int:
    raw = os.environ.get(SHARDS_ENV, "1")
    try:
        count = int(raw)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{SHARDS_ENV}={raw!r}: the shard count must be a positive integer")
    return count


def concept_shard(concept_id: str, shards: int) -> int:
    """The shard (0..shards-1) that draws every prompt of `concept_id`."""
    if shards < 1:
        raise ValueError(f"shards must be at least 1, not {shards}")
    digest = hashlib.sha256(concept_id.encode("utf-8")).hexdigest()
    return int(digest, 16) % shards


def prompts_of_shard(prompts: Iterable[dict], shard: int, shards: int) -> list[dict]:
    """The prompts whose concept falls in `shard` of `shards`, in their original order."""
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} is outside 0..{shards - 1}")
    return [p for p in prompts if concept_shard(p["concept_id"], shards) == shard]
