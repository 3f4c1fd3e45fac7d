"""What the simulator tests share: a simulated bundle's tables read back independently of the
ingestion/ readers (json, or duckdb for Parquet), Table 2 of the paper as seeded, and the two
generators of the structure world (the `world` fixture of conftest.py).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb

from ingestion.paths import SEEDS_DIR

STRUCTURE_MODELS = ("ernie-image", "flux1-dev")


def read_table(folder: Path, name: str) -> list[dict]:
    jsonl, parquet = folder / f"{name}.jsonl", folder / f"{name}.parquet"
    if jsonl.exists():
        with jsonl.open(encoding="utf-8") as f:
            return [json.loads(line) for line in f]
    con = duckdb.connect()
    cursor = con.execute(f"select * from read_parquet('{parquet}')")
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def paper_table2() -> dict[tuple[str, str, str], float]:
    with (SEEDS_DIR / "paper_table2.csv").open(encoding="utf-8") as f:
        return {
            (r["model_id"], r["language"], r["view"]): float(r["score"]) for r in csv.DictReader(f)
        }
