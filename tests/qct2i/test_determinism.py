"""Deterministic builds (issue 12): the same evidence gives byte-identical marts (one MD5 per
mart over its sorted rows) across two builds, across a JSONL and a Parquet bundle, and across an
append of a 14th generator to 13 versus one import of all 14. Every step runs the console script
as a user does: `qct2i import [--append]`, then `qct2i build`, which publishes.
"""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from ingestion.bundle.format import TABLES, write_bundle
from ingestion.paths import SEEDS_DIR
from ingestion.sources.simulator import (
    SimulationConfig,
    calibrated_rates,
    load_table2,
    load_taxonomy,
    simulate,
)
from reporting.fingerprints import mart_fingerprints
from tests.helpers import query, run_cli

NEWCOMER = "newcomer"
CONCEPTS = 60


def _seeds_with_a_14th_generator(folder):
    shutil.copytree(SEEDS_DIR, folder)
    with (folder / "generators.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    rows.append(
        {**rows[0], "model_id": NEWCOMER, "display_name": "Newcomer", "cost_gpu_s_per_mp": "9.5"}
    )
    with (folder / "generators.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return folder


def _newcomer_rates(seeds):
    """A newcomer 10% weaker than ERNIE-Image everywhere (it has no Table 2 row to calibrate on)."""
    ernie = calibrated_rates(load_taxonomy(seeds), load_table2(seeds), ["ernie-image"])
    return {(NEWCOMER, lang, cap): 0.9 * rate for (_, lang, cap), rate in ernie.items()}


def _read_jsonl_bundle(folder):
    tables = {}
    for name in TABLES:
        path = folder / f"{name}.jsonl"
        if path.exists():
            with path.open(encoding="utf-8") as handle:
                tables[name] = [json.loads(line) for line in handle]
    return tables


def _split_by_generator(bundle, first, second, model):
    """Two bundles: every generator but `model`, and `model` alone (prompts and questions whole)."""
    tables = _read_jsonl_bundle(bundle)
    for folder, keep in ((first, lambda m: m != model), (second, lambda m: m == model)):
        write_bundle(
            folder,
            {
                name: [row for row in rows if "model_id" not in row or keep(row["model_id"])]
                for name, rows in tables.items()
            },
        )


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    root = tmp_path_factory.mktemp("determinism")
    seeds = _seeds_with_a_14th_generator(root / "seeds")
    rates = _newcomer_rates(seeds)
    for fmt in ("jsonl", "parquet"):
        config = SimulationConfig(concepts=CONCEPTS, seed=7, rates=rates, seeds_dir=seeds, fmt=fmt)
        simulate(root / fmt, config)
    _split_by_generator(root / "jsonl", root / "first13", root / "newcomer", NEWCOMER)
    return root


def _run(args, warehouse):
    done = run_cli(args, warehouse)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def one_import(bundles):
    """All 14 generators in one JSONL import, built and published; its mart fingerprints."""
    warehouse = bundles / "one" / "qct2i.duckdb"
    _run(["import", str(bundles / "jsonl")], warehouse)
    _run(["build"], warehouse)
    return warehouse, mart_fingerprints(warehouse)


def test_the_world_has_fourteen_generators_and_marts_with_rows(one_import):
    warehouse, fingerprints = one_import
    models = query(warehouse, "select distinct model_id from marts.fct_hcq_leaderboard")
    assert len(models) == 14 and (NEWCOMER,) in models
    assert len(fingerprints) >= 20
    # one judge, no human ratings, no converted release (so no release's own score), no
    # generator evaluated on a subset, every generator's cost known (none left out of routing):
    # these marts have nothing to show here; every other mart has rows to compare
    nothing_to_show = {
        "fct_judge_agreement",
        "fct_human_agreement",
        "fct_conversion_report",
        "fct_release_scores",
        "fct_router_excluded_generators",
        "fct_subset_estimates",
        "fct_attribution_agreement",  # no question attributed by a model
    }
    empty = {mart for mart, f in fingerprints.items() if f["rows"] == 0}
    assert empty == nothing_to_show, fingerprints


def test_a_second_build_is_byte_identical(one_import):
    warehouse, fingerprints = one_import
    _run(["build"], warehouse)
    assert mart_fingerprints(warehouse) == fingerprints


def test_a_parquet_bundle_builds_the_same_marts(bundles, one_import):
    warehouse = bundles / "parquet-wh" / "qct2i.duckdb"
    _run(["import", str(bundles / "parquet")], warehouse)
    _run(["build"], warehouse)
    assert mart_fingerprints(warehouse) == one_import[1]


def test_appending_a_14th_generator_equals_one_import(bundles, one_import):
    warehouse = bundles / "halves" / "qct2i.duckdb"
    _run(["import", str(bundles / "first13")], warehouse)
    _run(["build"], warehouse)
    thirteen = mart_fingerprints(warehouse)
    appended = _run(["import", "--append", str(bundles / "newcomer")], warehouse)
    assert "appended " in appended.stdout
    again = _run(["import", "--append", str(bundles / "newcomer")], warehouse)
    assert "nothing new" in again.stdout
    _run(["build"], warehouse)

    fingerprints = mart_fingerprints(warehouse)
    assert fingerprints == one_import[1]
    assert fingerprints != thirteen  # the 14th generator did reach the marts
