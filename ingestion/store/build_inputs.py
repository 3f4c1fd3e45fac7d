"""What a build was built from, so that the next build redoes only what changed (docs/warehouse.md,
"Incremental builds").

The per-generator models (a generator's question records, validity, text matching, capability
evidence, ...) hold rows that depend on the benchmark (prompts, questions), the code and one
generator's evidence only. `qct2i build` keeps, in the file it publishes (`build_state.inputs`),
a fingerprint of each of those inputs: the code (the dbt project and the method library its
Python models call, with the DuckDB and dbt versions), the build's dbt vars, the benchmark, and per
generator its registry row, images, transcriptions and every judge's judgments (the failure
examples quote every judge; a judge's change that touches every generator builds in full). The next
build compares them with the working copy's evidence: the generators whose fingerprint changed
(added, replaced, removed) are rebuilt in those models, every other model that reads evidence is
rebuilt whole, and the nodes that read none stand (`dbt_selection`); a change anywhere else (code,
vars, benchmark, or no record at all) makes the build full.

Fingerprints are taken from the evidence itself, not from a log the importers keep, so every
writer of the raw tables (an append, a replacing import, `qct2i calibrate`) is seen alike.

Crash safety: before dbt runs, the generators it is about to rebuild (or a full-build marker) are
committed to `build_state.pending` in the working copy, and only a publish clears them. A build
killed half way (kill -9) or failed leaves them there, so the next build redoes them even if the
evidence went back to what was recorded meanwhile (the partly rebuilt tables hold neither).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from graphlib import TopologicalSorter
from importlib import metadata
from pathlib import Path

import duckdb

from ingestion.paths import PROJECT_ROOT

STATE_SCHEMA = "build_state"
INPUTS_TABLE = f"{STATE_SCHEMA}.inputs"  # (input, fingerprint) of the last published build
PENDING_TABLE = f"{STATE_SCHEMA}.pending"  # generators being rebuilt; a NULL row: everything
# the incremental models read PENDING_TABLE (macros/incremental_generators.sql)

# What the models' results depend on besides the evidence (a change to any makes the build full).
_CODE_FOLDERS = ("models", "macros", "seeds", "method")
_CODE_FILES = ("dbt_project.yml",)
_CODE_SUFFIXES = {".sql", ".py", ".yml", ".yaml", ".csv", ".json"}
_VERSIONED = ("dbt-core", "dbt-duckdb", "duckdb")
# A generator's evidence that the per-generator models read.
_GENERATOR_TABLES = ("generators", "images", "transcriptions", "judgments")
# The dbt project's raw sources (models/staging/_sources.yml), each either the benchmark, which an
# incremental build never changes (its fingerprint is `_benchmark_fingerprint`'s, so a change to
# any of them builds in full), or evidence, whose nodes downstream every build runs.
BENCHMARK_SOURCES = ("prompts", "questions")
EVIDENCE_SOURCES = (
    "generators",
    "images",
    "judgments",
    "transcriptions",
    "ratings",
    "conversion_report",
)
_GENERATOR_PREFIX = "generator:"


@dataclass(frozen=True)
class BuildPlan:
    """A full build, or the generators an incremental build rebuilds (sorted; maybe none)."""

    full: bool
    generators: tuple[str, ...]
    reason: str


def code_fingerprint(root: Path = PROJECT_ROOT) -> str:
    """SHA-256 over the dbt project's files, the method library and the tool versions."""
    digest = hashlib.sha256()
    paths = [root / name for name in _CODE_FILES]
    for folder in _CODE_FOLDERS:
        paths += [p for p in (root / folder).rglob("*") if p.suffix in _CODE_SUFFIXES]
    for path in sorted(p for p in paths if p.is_file() and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    for package in _VERSIONED:
        digest.update(f"{package}=={metadata.version(package)}\0".encode())
    return digest.hexdigest()


def current_inputs(
    con: duckdb.DuckDBPyConnection, build_vars: Mapping, code: str
) -> dict[str, str]:
    """{input: fingerprint} of the warehouse open on `con`: `code`, `vars`, `benchmark` and one
    `generator:<model_id>` per generator with evidence."""
    inputs = {
        "code": code,
        "vars": json.dumps(dict(build_vars), sort_keys=True),
        "benchmark": _benchmark_fingerprint(con),
    }
    parts: dict[str, list[str]] = {}
    for table in _GENERATOR_TABLES:
        if not _has_table(con, "raw", table):
            continue
        rows = con.execute(
            f"select model_id, count(*), bit_xor(hash(t)) from raw.{table} as t "
            "group by model_id order by model_id"
        ).fetchall()
        for model_id, n, digest in rows:
            parts.setdefault(model_id, []).append(f"{table}:{n}:{digest:016x}")
    inputs.update({_GENERATOR_PREFIX + model: ";".join(p) for model, p in parts.items()})
    return inputs


def _benchmark_fingerprint(con: duckdb.DuckDBPyConnection) -> str:
    """The benchmark's tables (prompts, questions), and whether any transcription exists: the
    transcription capability is scored from OCR only then (int_capability_score_sources), for
    every generator."""
    parts = []
    for table in BENCHMARK_SOURCES:  # the nodes an incremental build leaves standing read these
        if _has_table(con, "raw", table):
            n, digest = con.execute(
                f"select count(*), bit_xor(hash(t)) from raw.{table} t"
            ).fetchone()
            parts.append(f"{table}:{n}:{digest or 0:016x}")
    if _has_table(con, "raw", "transcriptions"):
        (any_text,) = con.execute("select count(*) > 0 from raw.transcriptions").fetchone()
        parts.append(f"transcriptions:{any_text}")
    return ";".join(parts)


def _has_table(con: duckdb.DuckDBPyConnection, schema: str, table: str) -> bool:
    (n,) = con.execute(
        "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
        [schema, table],
    ).fetchone()
    return n > 0


def recorded_inputs(con: duckdb.DuckDBPyConnection) -> dict[str, str] | None:
    """The inputs the last published build recorded, or None (no record: build in full)."""
    if not _has_table(con, STATE_SCHEMA, "inputs"):
        return None
    return dict(con.execute(f"select input, fingerprint from {INPUTS_TABLE}").fetchall())


def pending(con: duckdb.DuckDBPyConnection) -> tuple[bool, set[str]]:
    """(a full build is pending, the generators pending) from builds that did not publish."""
    if not _has_table(con, STATE_SCHEMA, "pending"):
        return False, set()
    rows = [model for (model,) in con.execute(f"select model_id from {PENDING_TABLE}").fetchall()]
    return None in rows, {model for model in rows if model is not None}


def plan_build(
    recorded: Mapping[str, str] | None,
    current: Mapping[str, str],
    pending_full: bool = False,
    pending_generators: set[str] | frozenset[str] = frozenset(),
) -> BuildPlan:
    """Full when there is no record, when the code, the vars or the benchmark changed, or when a
    full build did not publish; otherwise incremental on the generators whose evidence changed
    (added, replaced or removed) plus those a build that did not publish was rebuilding. A change
    to every generator is built in full (it would rebuild every row anyway)."""
    if recorded is None:
        return BuildPlan(True, (), "no record of the last build's inputs")
    for what in ("code", "vars", "benchmark"):
        if recorded.get(what) != current.get(what):
            return BuildPlan(True, (), f"the {what} changed since the last build")
    if pending_full:
        return BuildPlan(True, (), "a full build did not finish")
    generators = {k for k in {*recorded, *current} if k.startswith(_GENERATOR_PREFIX)}
    changed = {k for k in generators if recorded.get(k) != current.get(k)}
    changed = {k.removeprefix(_GENERATOR_PREFIX) for k in changed} | set(pending_generators)
    held = {k.removeprefix(_GENERATOR_PREFIX) for k in current if k.startswith(_GENERATOR_PREFIX)}
    if held and held <= changed:
        return BuildPlan(True, (), "every generator's evidence changed")
    how = f"{len(changed)} of {len(held)} generators changed"
    return BuildPlan(False, tuple(sorted(changed)), how)


def dbt_selection(plan: BuildPlan) -> tuple[str, ...]:
    """The nodes a build runs (dbt's `--select`; empty: every node). An incremental build runs
    those downstream of an evidence source, with their tests; the others (the seeds, the question
    graphs, the time spine and their tests) read only the code and the benchmark, which a build is
    incremental only if unchanged since the recorded build, so their tables stand as built."""
    return () if plan.full else tuple(f"source:raw.{name}+" for name in EVIDENCE_SOURCES)


# the node kinds `dbt build` runs (unit tests aside: `ingestion.paths.DBT_BUILD_EXCLUDES`)
_BUILT_NODES = ("model", "seed", "snapshot", "test")


def standing_nodes(manifest: Mapping) -> tuple[str, ...]:
    """The unique ids of the nodes `dbt_selection` leaves out of an incremental build, read from
    a parsed manifest: every seed, model, snapshot and test not downstream of an evidence
    source; each after its parents (Dagster takes a multi-asset's outputs in that order)."""
    downstream: set[str] = set()
    reached = [
        uid
        for uid, source in manifest["sources"].items()
        if source["source_name"] == "raw" and source["name"] in EVIDENCE_SOURCES
    ]
    while reached:
        for child in manifest["child_map"].get(reached.pop(), ()):
            if child not in downstream:
                downstream.add(child)
                reached.append(child)
    standing = sorted(
        uid
        for uid, node in manifest["nodes"].items()
        if node["resource_type"] in _BUILT_NODES and uid not in downstream
    )
    graph = TopologicalSorter({uid: manifest["parent_map"].get(uid, ()) for uid in standing})
    return tuple(uid for uid in graph.static_order() if uid in standing)


def dbt_exclusion(manifest: Mapping, nodes: Sequence[str]) -> tuple[str, ...]:
    """dbt's arguments that leave `nodes` (unique ids) out of a run that selects every node
    itself (dagster-dbt's `--select fqn:*`): each by its `fqn:`, with `--indirect-selection
    empty`, so that excluding a node does not also drop a test with a parent on each side, which
    `dbt_selection` runs (both are checked against `dbt ls`). No nodes: no arguments."""
    if not nodes:
        return ()
    names = " ".join("fqn:" + ".".join(manifest["nodes"][uid]["fqn"]) for uid in nodes)
    return ("--exclude", names, "--indirect-selection", "empty")


def mark_pending(con: duckdb.DuckDBPyConnection, plan: BuildPlan) -> None:
    """Commit what this build rebuilds before dbt runs (a NULL row: everything); added to what
    an earlier build that did not publish left."""
    con.execute(f"create schema if not exists {STATE_SCHEMA}")
    con.execute(f"create table if not exists {PENDING_TABLE} (model_id varchar)")
    rows = [[None]] if plan.full else [[model] for model in plan.generators]
    if rows:
        con.executemany(f"insert into {PENDING_TABLE} values (?)", rows)


def record_inputs(con: duckdb.DuckDBPyConnection, inputs: Mapping[str, str] | None) -> None:
    """At publish: keep the inputs this build was built from (or, None, keep no record, so the
    next build is full) and clear what was pending: it is built."""
    con.execute(f"drop schema if exists {STATE_SCHEMA} cascade")
    if inputs is None:
        return
    con.execute(f"create schema {STATE_SCHEMA}")
    con.execute(f"create table {INPUTS_TABLE} (input varchar, fingerprint varchar)")
    con.executemany(f"insert into {INPUTS_TABLE} values (?, ?)", sorted(inputs.items()))


def prepare_build(
    working: Path, build_vars: Mapping, full: bool = False
) -> tuple[BuildPlan, dict[str, str]]:
    """Plan the build of the working copy (call with the writer lock held) and commit what it
    will rebuild to `build_state.pending`; returns the plan and the inputs to record at publish.
    `full`: `qct2i build --full`."""
    with duckdb.connect(str(working)) as con:
        inputs = current_inputs(con, build_vars, code_fingerprint())
        pending_full, pending_generators = pending(con)
        plan = plan_build(recorded_inputs(con), inputs, pending_full, pending_generators)
        if full and not plan.full:
            plan = BuildPlan(True, (), "--full")
        mark_pending(con, plan)
    return plan, inputs


def describe(plan: BuildPlan, selection: tuple[str, ...] = ()) -> str:
    """One line for the build's output: full and why, or which generators (and, when dbt runs
    `selection`, the `dbt_selection` of the plan, that the rest stands)."""
    if plan.full:
        return f"full build ({plan.reason})"
    named = ", ".join(plan.generators) if plan.generators else "none"
    line = f"incremental build ({plan.reason}): per-generator models rebuild {named}"
    return f"{line}; the nodes that read no evidence stand" if selection else line
