"""`qct2i export DIR` and `qct2i verify DIR`: publish the warehouse's evidence as a release that
anyone can rebuild into byte-identical marts, and check that a rebuild did (CONTRACTS
"Additions"; docs/importing.md "Publishing reproducible evidence").

A release is a bundle (CONTRACTS "The evidence bundle"): one Parquet file per contract table, in
the contract's column order and types, rows in natural-key order (`TableSpec.key`), plus
`manifest.json` (ingestion/bundle/manifest.py): the code that exported it and the build stamp of the
code that built its marts, the judges and generator revisions present, the seeds (images' seeds,
the dbt vars that seed the bootstraps), row counts and a SHA-256 per file, and the MD5 of every
mart of the exporter's warehouse (reporting/fingerprints.py).

`questions` is the one table not in key order: its rows keep their order within each prompt
(`question_order`), because the importer numbers questions in file order and the structural marts
order question pairs by that number.

The release is written into a temporary folder beside DIR and renamed into place, so DIR holds a
whole release or nothing new. DIR must be absent or empty; `force` replaces a previous release
(a folder holding manifest.json) and nothing else, so a mistyped DIR never deletes a folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from ingestion.bundle.format import QUESTION_ORDER, TABLES, TableSpec
from ingestion.bundle.manifest import MANIFEST_FORMAT, MANIFEST_NAME, file_sha256
from ingestion.paths import PROJECT_ROOT, duckdb_config
from ingestion.store.warehouse import code_version_of_checkout
from reporting.facts import relation_names
from reporting.fingerprints import fingerprints_of, mart_fingerprints

# how many distinct image seeds the manifest lists (each image's seed is in images.parquet)
_LISTED_SEEDS = 1000


class ExportRefused(RuntimeError):
    """The release cannot be written where asked; nothing was written."""


def export_evidence(warehouse: Path, folder: Path, force: bool = False) -> dict:
    """Write the evidence release of the (published) `warehouse` into `folder`; returns the
    manifest. Raises ExportRefused, writing nothing, when `folder` is taken."""
    folder = Path(folder).absolute()
    _refuse_taken_folder(folder, force)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.with_name(f".{folder.name}.partial-{uuid.uuid4().hex[:12]}")
    staging.mkdir()
    try:
        manifest = _write_release(Path(warehouse), staging)
        _move_into_place(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _refuse_taken_folder(folder: Path, force: bool) -> None:
    if not folder.exists():
        return
    if not folder.is_dir():
        raise ExportRefused(f"{folder}: exists and is not a folder; nothing was written")
    if not any(folder.iterdir()):
        return
    if not force:
        raise ExportRefused(
            f"{folder}: not empty; name a new or empty folder, or pass --force to replace a "
            "previous release there. Nothing was written."
        )
    if not (folder / MANIFEST_NAME).is_file():
        raise ExportRefused(
            f"{folder}: --force replaces only a previous release (a folder holding "
            f"{MANIFEST_NAME}), and this folder holds none. Nothing was written."
        )


def _move_into_place(staging: Path, folder: Path) -> None:
    """Rename the finished release to `folder`; a previous release there is moved aside first and
    deleted only once the new one is in place."""
    if not folder.exists():
        os.rename(staging, folder)
        return
    previous = folder.with_name(f".{folder.name}.previous-{uuid.uuid4().hex[:12]}")
    os.rename(folder, previous)
    os.rename(staging, folder)
    shutil.rmtree(previous)


# --------------------------------------------------------------------------------------------------
# Writing the release
# --------------------------------------------------------------------------------------------------


def _write_release(warehouse: Path, out: Path) -> dict:
    """The tables, then the manifest, all read through one read-only connection: the evidence and
    the mart hashes come from the same file even if a build publishes meanwhile."""
    with duckdb.connect(str(warehouse), read_only=True, config=duckdb_config()) as con:
        stored = set(relation_names(con, "raw"))
        tables = {name: _evidence_table(con, spec, stored) for name, spec in TABLES.items()}
        build = _build_stamp(con)
        marts = {
            mart: {"rows": f["rows"], "md5": f["md5"]} for mart, f in fingerprints_of(con).items()
        }
    files = {}
    for name, table in tables.items():
        path = out / f"{name}.parquet"
        pq.write_table(table, path)
        files[path.name] = {"table": name, "rows": table.num_rows, "sha256": file_sha256(path)}
    manifest = {
        "format": MANIFEST_FORMAT,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "code": _code(),
        "build": build,
        **_provenance(tables, build),
        "files": files,
        "marts": marts,
    }
    text = json.dumps(manifest, indent=1, ensure_ascii=False, default=str) + "\n"
    (out / MANIFEST_NAME).write_text(text, encoding="utf-8")
    return manifest


def _evidence_table(con: duckdb.DuckDBPyConnection, spec: TableSpec, stored: set[str]) -> pa.Table:
    """`raw.<table>` with the contract's columns and types, in release order. A table or column
    that an older warehouse lacks reads as the contract says an absent one does (empty; the
    column's default, else null)."""
    if spec.name not in stored:
        return spec.schema.empty_table()
    present = {
        name
        for (name,) in con.execute(
            "select column_name from information_schema.columns "
            "where table_schema = 'raw' and table_name = ?",
            [spec.name],
        ).fetchall()
    }
    selected = ", ".join(
        f'"{c.name}"' if c.name in present else f"{_literal(c.default)}::{c.duckdb_type}"
        for c in spec.columns
    )
    order = ("prompt_id", QUESTION_ORDER) if spec.name == "questions" else spec.key
    listed = ", ".join(f'"{column}"' for column in order)
    table = con.sql(f"select {selected} from raw.{spec.name} order by {listed}").to_arrow_table()
    return table.rename_columns(list(spec.column_names)).cast(spec.schema)


def _literal(value: str | None) -> str:
    return "null" if value is None else "'" + value.replace("'", "''") + "'"


def _build_stamp(con: duckdb.DuckDBPyConnection) -> dict | None:
    """`main.build_id`: which code built the marts being hashed (None for an unbuilt file)."""
    if "build_id" not in relation_names(con, "main"):
        return None
    cursor = con.execute("select * from main.build_id")
    columns = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    return None if row is None else dict(zip(columns, row, strict=True))


def _code() -> dict:
    """The exporting code: package version and git commit (`unknown` outside a checkout)."""
    try:
        version = metadata.version("qct2i")
    except metadata.PackageNotFoundError:
        version = "unknown"
    commit = code_version_of_checkout()
    return {
        "package": "qct2i",
        "package_version": version,
        "git_commit": commit,
        "git_worktree_clean": None if commit == "unknown" else _worktree_clean(),
    }


def _worktree_clean() -> bool | None:
    """Whether tracked files match the commit: a release from edited code names a commit that
    does not reproduce it."""
    try:
        result = subprocess.run(
            ["git", "-C", str(PROJECT_ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() == "" if result.returncode == 0 else None


def _provenance(tables: dict[str, pa.Table], build: dict | None) -> dict:
    """Judges, generator revisions and seeds, summarised from the tables being released."""
    with duckdb.connect() as con:
        for name, table in tables.items():
            con.register(name, table)
        judges = _rows(
            con,
            "select judge_id, judge_model, judge_revision, prompt_template_sha, "
            "count(*) as n_judgments from judgments group by all order by all",
        )
        generators = _rows(
            con,
            "select model_id, hub_id, revision, pipeline_class from generators order by model_id",
        )
        drawn = _rows(
            con,
            "select model_id, generator_revision, backend, count(*) as n_images "
            "from images group by all order by all",
        )
        distinct = con.execute("select distinct seed from images order by 1").fetchall()
        seeds = [seed for (seed,) in distinct]
    vars_ = _dbt_vars(build)
    return {
        "judges": judges,
        "generators": generators,
        "image_generator_revisions": drawn,
        "seeds": {
            "dbt_vars": {name: value for name, value in vars_.items() if name.endswith("_seed")},
            "images": {
                "n_distinct": len(seeds),
                "distinct": seeds[:_LISTED_SEEDS],
                "complete_list": len(seeds) <= _LISTED_SEEDS,
            },
        },
        # the vars the marts were built with: dbt_project.yml's at export time, updated by the
        # build's overrides (`qct2i build --official-judge`, a Dagster run's `vars`; the stamp)
        "dbt_vars": vars_,
    }


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def _dbt_vars(build: dict | None) -> dict:
    project = yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text(encoding="utf-8"))
    overrides = json.loads((build or {}).get("build_vars") or "{}")
    return dict(project.get("vars") or {}) | overrides


# --------------------------------------------------------------------------------------------------
# Checking a rebuild
# --------------------------------------------------------------------------------------------------


def mart_differences(warehouse: Path, manifest: dict) -> tuple[list[str], list[str]]:
    """(differences, extras): each mart of the manifest whose MD5 in `warehouse` differs or that
    `warehouse` lacks; and the marts `warehouse` holds that the manifest does not list (newer
    code may add marts; they do not break the claim about the released ones)."""
    expected = manifest.get("marts") or {}
    actual = mart_fingerprints(warehouse)
    differences = []
    for mart in sorted(expected):
        want = expected[mart]
        if mart not in actual:
            differences.append(f"{mart}: in the manifest, missing from this warehouse")
        elif actual[mart]["md5"] != want["md5"]:
            got = actual[mart]
            differences.append(
                f"{mart}: MD5 expected {want['md5']} ({want['rows']} rows), "
                f"actual {got['md5']} ({got['rows']} rows)"
            )
    return differences, sorted(set(actual) - set(expected))
