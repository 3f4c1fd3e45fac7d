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

# `dagster dev` re-parses on every load; elsewhere (tests, the CLI, a fresh clone) parse once
# when no manifest exists yet, so importing the definitions never fails on a clean checkout.
DBT_PROJECT.prepare_if_dev()
if not DBT_PROJECT.manifest_path.exists():
    DBT_PROJECT.preparer.prepare(DBT_PROJECT)
