"""The one cached dbt project of the repository (the repository root is the dbt project)."""

import os
import sys
from pathlib import Path

from dagster_dbt import DbtProject

from ingestion.paths import PROJECT_ROOT

# dbt-core is a dependency of this package, so its executable sits beside the interpreter; put it
# on PATH for dagster-dbt, which looks `dbt` up there, also when the venv is not activated.
_INTERPRETER_BIN = str(Path(sys.executable).parent)
if _INTERPRETER_BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = os.pathsep.join([_INTERPRETER_BIN, os.environ.get("PATH", "")])

DBT_PROJECT = DbtProject(project_dir=PROJECT_ROOT, profiles_dir=PROJECT_ROOT)

_DBT_SOURCES = ("dbt_project.yml", "models", "macros", "seeds", "tests/dbt")


def _manifest_is_stale() -> bool:
    """True when the manifest is missing or older than any file dbt parses."""
    manifest = DBT_PROJECT.manifest_path
    if not manifest.exists():
        return True
    built = manifest.stat().st_mtime
    for name in _DBT_SOURCES:
        path = PROJECT_ROOT / name
        files = [path] if path.is_file() else path.rglob("*")
        if any(f.stat().st_mtime > built for f in files if f.is_file()):
            return True
    return False


# `dagster dev` re-parses on every load; elsewhere (tests, the CLI, a fresh clone) parse when
# the manifest is missing or stale, so the asset graph always matches the dbt project.
DBT_PROJECT.prepare_if_dev()
if _manifest_is_stale():
    DBT_PROJECT.preparer.prepare(DBT_PROJECT)
