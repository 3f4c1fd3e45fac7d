"""Bench stage: the append case of issue 33, an incremental build against a full one.

On a copy of the built paper-scale warehouse (13 generators, every model built whole by the
bench's `dbt build`), recorded as built from its evidence by this code (what `qct2i build` would
have recorded, without paying a third build), a 14th generator is appended (`qct2i import
--append`: a copy of one generator's evidence under a new model id, `newcomer`, so it costs what
a real one would), and `qct2i build` runs incremental (`incremental_build_s`); then `qct2i build
--full` rebuilds the same evidence (`full_build_s`), in the same run. `incremental_vs_full` is
their ratio (issue 33: at most 0.35); `incremental_marts_equal` whether the two builds' mart
fingerprints (`reporting.fingerprints`) agree, `incremental_marts_differing` the marts that do
not. Both times are the whole command: planning, dbt, publishing.

`incremental_share`: the share of the full build's model and test seconds (dbt's
run_results.json) spent in the nodes an incremental build narrows: the models materialised
`incremental` (per generator, per prompt), the Python models with the `incremental_build` config,
and their tests.

`standing_share`: the share of the full build's node-seconds in the nodes the incremental build did
not run at all (those that read no evidence, `ingestion.store.build_inputs.dbt_selection`).

`dagster_incremental_build_s` (`make bench` only): the same append built through Dagster (every dbt
asset of the definitions materialised in process, as the inbox's and the GPU chain's runs build),
on a second copy of the warehouse recorded as built, so it too is incremental;
`dagster_incremental_vs_full` its ratio to the full `qct2i build` above, `dagster_marts_equal`
whether its marts are the full build's, `dagster_parse` what dbt said of its parse (its saved parse
is keyed by the working copy's path: the first run on a checkout parses the whole project).

Where each build's time goes (`<build>_dbt_run_s`: dbt's own elapsed time from the start of its
run, so the command's time less it is planning, dbt's start and parse, and publishing;
`<build>_model_node_s` and `<build>_test_node_s`: node-seconds on dbt's two threads;
`<build>_slowest_nodes`: the five slowest, in seconds). `incremental_vs_full_cpu`: the same
ratio in CPU seconds (the command and its dbt child, user and system), which other work on a
shared machine stretches far less than wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import time
from pathlib import Path

import duckdb

from ingestion.paths import PROJECT_ROOT
from ingestion.store.build_inputs import code_fingerprint, current_inputs, record_inputs
from reporting.fingerprints import mart_fingerprints

NEWCOMER = "newcomer"
COPIED = "qwen-image"  # the generator whose evidence the newcomer repeats
_WITH_MODEL = ("generators", "images", "judgments", "transcriptions", "ratings")


def newcomer_bundle(bundle: Path, folder: Path, copied: str = COPIED) -> Path:
    """The bundle's rows of generator `copied` under the model id `newcomer` (image ids too),
    with the prompts and questions they answer (stored already: the append adds none)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("prompts", "questions"):
        shutil.copyfile(bundle / f"{name}.jsonl", folder / f"{name}.jsonl")
    for name in _WITH_MODEL:
        source = bundle / f"{name}.jsonl"
        if not source.exists():
            continue
        with source.open(encoding="utf-8") as rows, (folder / source.name).open("w") as out:
            for line in rows:
                if copied not in line:  # most lines: no JSON parse
                    continue
                row = json.loads(line)
                if row.get("model_id") != copied:
                    continue
                row["model_id"] = NEWCOMER
                if "image_id" in row:
                    row["image_id"] = f"{row['image_id']}--{NEWCOMER}"
                if name == "generators":
                    row["display_name"] = "Newcomer"
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return folder


def _record_as_built(published: Path) -> None:
    """Record the warehouse's inputs as `qct2i build` does at a publish: its models were all
    built, in full, by this code from this evidence with no vars."""
    with duckdb.connect(str(published)) as con:
        record_inputs(con, current_inputs(con, {}, code_fingerprint()))


def _cpu_s() -> float:
    """CPU seconds (user and system) of this process and its finished children (dbt)."""
    own, children = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _build(full: bool = False) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `qct2i build`."""
    from qct2i.writer_commands import cmd_build

    start, start_cpu = time.perf_counter(), _cpu_s()
    args = argparse.Namespace(official_judge=None, wait=0.0, full=full, dbt_log=False)
    if cmd_build(args) != 0:
        raise RuntimeError("qct2i build failed")
    return time.perf_counter() - start, _cpu_s() - start_cpu


def _append(folder: Path) -> None:
    from qct2i.writer_commands import cmd_import

    args = argparse.Namespace(
        folder=str(folder), append=True, replace_model=[], replace_judge=[], image_root=[], wait=0.0
    )
    if cmd_import(args) != 0:
        raise RuntimeError("qct2i import --append failed")


def _dagster_build() -> tuple[float, str]:
    """(wall seconds, what dbt said of its parse) of one Dagster run of every dbt asset on the
    warehouse `QCT2I_WAREHOUSE` names, in this process."""
    import dagster as dg

    from dagster_defs.definitions import defs

    definitions = defs()
    dbt_assets = definitions.resolve_assets_def(dg.AssetKey(["marts", "fct_hcq_leaderboard"]))
    job = definitions.resolve_implicit_global_asset_job_def()
    instance = dg.DagsterInstance.ephemeral()
    start = time.perf_counter()
    result = job.execute_in_process(asset_selection=list(dbt_assets.keys), instance=instance)
    wall = time.perf_counter() - start
    if not result.success:
        raise RuntimeError("the Dagster build failed")
    logs = [entry.user_message for entry in instance.all_logs(result.run_id)]
    return wall, next((m for m in logs if m.startswith("dbt parse:")), "dbt parse: not logged")


def incremental_share(target: Path) -> float:
    """Share of a full build's node seconds in the nodes an incremental build narrows."""
    manifest = json.loads((target / "manifest.json").read_text())
    narrowed = {
        uid
        for uid, node in manifest["nodes"].items()
        if node["resource_type"] == "model"
        and (
            node["config"].get("materialized") == "incremental"
            or "incremental_build" in node["config"]
        )
    }
    tested = {
        uid
        for uid, node in manifest["nodes"].items()
        if node["resource_type"] == "test"
        and set(node.get("depends_on", {}).get("nodes", [])) & narrowed
    }
    seconds = node_seconds(target)
    total = sum(seconds.values())
    return sum(s for uid, s in seconds.items() if uid in narrowed | tested) / total


def node_seconds(target: Path, run: dict | None = None) -> dict[str, float]:
    """{node: execution seconds} of the nodes a build ran, from its run_results.json (`run`, when
    the caller has read it already)."""
    if run is None:
        run = json.loads((target / "run_results.json").read_text())
    return {r["unique_id"]: r["execution_time"] for r in run["results"]}


def standing_share(target: Path, ran: set[str]) -> float:
    """Share of a full build's (`target`) node-seconds in the nodes outside `ran`."""
    seconds = node_seconds(target)
    return sum(s for uid, s in seconds.items() if uid not in ran) / sum(seconds.values())


def dbt_figures(target: Path, build: str) -> dict:
    """Where a build's dbt time went, from its run_results.json (keys prefixed by `build`)."""
    run = json.loads((target / "run_results.json").read_text())
    seconds = node_seconds(target, run)
    by_kind = {"model": 0.0, "test": 0.0}
    for uid, spent in seconds.items():
        kind = uid.split(".")[0]
        if kind in by_kind:
            by_kind[kind] += spent
    slowest = sorted(seconds, key=seconds.get, reverse=True)[:5]
    return {
        f"{build}_dbt_run_s": round(run["elapsed_time"], 2),
        f"{build}_model_node_s": round(by_kind["model"], 1),
        f"{build}_test_node_s": round(by_kind["test"], 1),
        f"{build}_slowest_nodes": {uid.split(".")[2]: round(seconds[uid], 2) for uid in slowest},
    }


def measure(warehouse: Path, bundle: Path, work: Path, through_dagster: bool = True) -> dict:
    """The append case's figures (the module docstring); `through_dagster=False` leaves out the
    Dagster build (`make bench-scale`, where a third 10x build would add some 7 minutes)."""
    root = work / "incremental"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    published = root / "qct2i.duckdb"
    shutil.copyfile(warehouse, published)
    newcomer = newcomer_bundle(bundle, root / "newcomer")
    previous = os.environ.get("QCT2I_WAREHOUSE")
    os.environ["QCT2I_WAREHOUSE"] = str(published)
    dagster_copy = root / "dagster" / "qct2i.duckdb"
    dagster_figures = {}
    try:
        _record_as_built(published)
        if through_dagster:
            dagster_copy.parent.mkdir()
            shutil.copyfile(published, dagster_copy)
        _append(newcomer)
        incremental_s, incremental_cpu_s = _build()
        breakdown = dbt_figures(PROJECT_ROOT / "target", "incremental")
        ran = set(node_seconds(PROJECT_ROOT / "target"))
        incremental = mart_fingerprints(published)
        full_s, full_cpu_s = _build(full=True)
        breakdown |= dbt_figures(PROJECT_ROOT / "target", "full")
        share = incremental_share(PROJECT_ROOT / "target")
        standing = standing_share(PROJECT_ROOT / "target", ran)
        full = mart_fingerprints(published)
        if through_dagster:
            os.environ["QCT2I_WAREHOUSE"] = str(dagster_copy)
            _append(newcomer)
            dagster_s, dagster_parse = _dagster_build()
            dagster_figures = {
                "dagster_incremental_build_s": round(dagster_s, 2),
                "dagster_incremental_vs_full": round(dagster_s / full_s, 3),
                "dagster_marts_equal": mart_fingerprints(dagster_copy) == full,
                "dagster_parse": dagster_parse,
            }
    finally:
        if previous is None:
            os.environ.pop("QCT2I_WAREHOUSE", None)
        else:
            os.environ["QCT2I_WAREHOUSE"] = previous
    return {
        "incremental_build_s": round(incremental_s, 2),
        "full_build_s": round(full_s, 2),
        "incremental_vs_full": round(incremental_s / full_s, 3),
        "incremental_cpu_s": round(incremental_cpu_s, 1),
        "full_cpu_s": round(full_cpu_s, 1),
        "incremental_vs_full_cpu": round(incremental_cpu_s / full_cpu_s, 3),
        "incremental_marts_equal": incremental == full,
        # which marts, when they are not: one 1x run of 2026-12-04 said False and its rerun
        # agreed, with nothing kept to say where
        "incremental_marts_differing": sorted(
            mart for mart in {*incremental, *full} if incremental.get(mart) != full.get(mart)
        ),
        **dagster_figures,
        "incremental_share": round(share, 3),
        "standing_share": round(standing, 3),
        **breakdown,
    }
