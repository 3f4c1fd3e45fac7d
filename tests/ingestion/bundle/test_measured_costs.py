"""Measured costs written into a warehouse's raw.generators (`ingestion.bundle.measured_costs`,
what `qct2i calibrate` runs), on a warehouse made here: no dbt build."""

from __future__ import annotations

import duckdb

from ingestion.bundle.measured_costs import record_measured_costs


def _cost(model_id: str, gpu_s: float, **more) -> dict:
    return {
        "model_id": model_id,
        "cost_gpu_s_per_mp": gpu_s,
        "cost_source": "measured",
        "cost_gpu_model": "NVIDIA H200",
        "cost_measured_at": "2026-12-02T03:10:00+00:00",
        "cost_versions": "torch 2.11.0",
        **more,
    }


def _generators(warehouse) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(
            "SELECT model_id, display_name, hub_id, cost_gpu_s_per_mp, cost_source, "
            "cost_gpu_model, cost_measured_at, cost_versions FROM raw.generators"
        ).fetchall()


def _log(warehouse) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.execute(
            "SELECT mode, n_generators, n_judgments FROM raw.bundle_imports ORDER BY imported_at"
        ).fetchall()


def test_costs_add_new_generators_then_replace_only_the_cost_of_held_ones(tmp_path):
    """Guards against a calibration that drops a held generator's name or hub id, updates the
    wrong row, misses a cost column, or is not logged (mutation testing, issue 36). By hand: the
    first file adds a and b whole (display name and hub id as the row has them); the second
    updates a's five cost columns only, keeping its display name and hub id, and adds c; the
    rows come back in key order; each file is one `calibrate` line of the log."""
    warehouse = tmp_path / "w.duckdb"
    first = record_measured_costs(
        warehouse,
        tmp_path / "bench-1.json",
        [_cost("b", 4.0), _cost("a", 21.5, display_name="A", hub_id="org/a")],
    )
    assert (first.updated, first.added) == ([], ["b", "a"])
    second = record_measured_costs(
        warehouse,
        tmp_path / "bench-2.json",
        [
            _cost("a", 9.0, cost_gpu_model="NVIDIA A100", display_name="other", hub_id="x/y")
            | {"cost_measured_at": "2026-12-03", "cost_versions": "torch 2.13.0"},
            _cost("c", 1.5),
        ],
    )
    assert (second.updated, second.added) == (["a"], ["c"])
    assert _generators(warehouse) == [
        ("a", "A", "org/a", 9.0, "measured", "NVIDIA A100", "2026-12-03", "torch 2.13.0"),
        (
            "b",
            None,
            None,
            4.0,
            "measured",
            "NVIDIA H200",
            "2026-12-02T03:10:00+00:00",
            "torch 2.11.0",
        ),
        (
            "c",
            None,
            None,
            1.5,
            "measured",
            "NVIDIA H200",
            "2026-12-02T03:10:00+00:00",
            "torch 2.11.0",
        ),
    ]
    assert _log(warehouse) == [("calibrate", 2, 0), ("calibrate", 2, 0)]
