"""Measured costs written into a warehouse's `raw.generators` (`qct2i calibrate`, issue 23).

A generator the warehouse holds keeps its name, hub id and revision and takes the measured cost
with where it was measured (`cost_source = measured`, `cost_gpu_model`, `cost_measured_at`,
`cost_versions`); one it lacks gets the whole row. One transaction, logged in
`raw.bundle_imports` (mode `calibrate`): the file is taken whole or not at all. A replacing
`qct2i import` starts the evidence over, calibrations included.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ingestion.bundle.format import TABLES
from ingestion.bundle.raw_tables import (
    create_raw_table,
    quoted,
    raw_columns,
    raw_transaction,
    record_import,
    resort_raw_table,
)

COST_COLUMNS = (
    "cost_gpu_s_per_mp",
    "cost_source",
    "cost_gpu_model",
    "cost_measured_at",
    "cost_versions",
)


@dataclass(frozen=True)
class CostsRecorded:
    updated: list[str]  # generators the warehouse held, their cost replaced
    added: list[str]  # generators it did not hold


def record_measured_costs(warehouse: Path, source: Path, rows: list[dict]) -> CostsRecorded:
    """`rows` (ingestion.sources.gpu_bench_costs) into `warehouse`'s raw.generators."""
    updated, added = [], []
    with raw_transaction(warehouse) as con:
        for name in TABLES:  # a warehouse with no import yet gets the (empty) raw tables
            create_raw_table(con, name, replace=False)
        held = {m for (m,) in con.execute("SELECT model_id FROM raw.generators").fetchall()}
        columns = [column for column, _ in raw_columns("generators")]
        for row in rows:
            if row["model_id"] in held:
                assignments = ", ".join(f'"{column}" = ?' for column in COST_COLUMNS)
                values = [row[column] for column in COST_COLUMNS] + [row["model_id"]]
                con.execute(f"UPDATE raw.generators SET {assignments} WHERE model_id = ?", values)
                updated.append(row["model_id"])
            else:
                marks = ", ".join("?" for _ in columns)
                con.execute(
                    f"INSERT INTO raw.generators ({quoted(columns)}) VALUES ({marks})",
                    [row.get(column) for column in columns],
                )
                added.append(row["model_id"])
        resort_raw_table(con, "generators")
        record_import(con, source, "calibrate", {"generators": len(rows)}, restart=False)
    return CostsRecorded(updated, added)
