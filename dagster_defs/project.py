"""The dbt project of the repository (the repository root is the dbt project), prepared on demand.

Nothing here runs at import: `prepared_dbt_project()` is called by the Definitions factory
(`dagster_defs.definitions.defs`), i.e. whenever Dagster, the CLI demo or a test loads the
definitions. It re-parses under `dagster dev` (dagster-dbt's `prepare_if_dev`) and elsewhere when
the manifest is missing or older than any file dbt parses, so the asset graph always matches the
dbt project without a parse on every import. Processes that load the definitions at once (a
webserver and a daemon, parallel test workers) take turns at that check, so none reads a manifest
another is writing.
"""

import fcntl
import os
import sys
from pathlib import Path

from dagster_dbt import DbtProject

from ingestion.paths import PROJECT_ROOT

# dbt-core is a dependency of this package, so its executable sits beside the interpreter.
DBT_EXECUTABLE = str(Path(sys.executable).parent / "dbt")
DBT_SOURCES = ("dbt_project.yml", "models", "macros", "seeds", "tests/dbt")


def dbt_project() -> DbtProject:
    """The project's description (paths only: reading it runs no dbt). Its parse writes the
    manifest whatever DBT_WRITE_JSON says (the tests turn JSON artifacts off): the asset graph is
    read from it."""
    return DbtProject(
        project_dir=PROJECT_ROOT,
        profiles_dir=PROJECT_ROOT,
        prepare_project_cli_args=["parse", "--quiet", "--write-json"],
    )


def manifest_is_stale(project: DbtProject, sources: tuple[str, ...] = DBT_SOURCES) -> bool:
    """True when the manifest is missing or older than any file dbt parses."""
    manifest = project.manifest_path
    if not manifest.exists():
        return True
    built = manifest.stat().st_mtime
    for name in sources:
        path = Path(project.project_dir) / name
        files = [path] if path.is_file() else path.rglob("*")
        if any(f.stat().st_mtime > built for f in files if f.is_file()):
            return True
    return False


def _put_dbt_on_path() -> None:
    """dagster-dbt's preparer runs `dbt` from PATH: make it this interpreter's, also when the venv
    is not activated."""
    interpreter_bin = str(Path(sys.executable).parent)
    if interpreter_bin not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([interpreter_bin, os.environ.get("PATH", "")])


def prepared_dbt_project() -> DbtProject:
    """The project with a manifest that matches its files (`dbt parse` only when needed)."""
    project = dbt_project()
    _put_dbt_on_path()
    lock = Path(project.project_dir) / "target" / ".prepare.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        project.prepare_if_dev()  # `dagster dev`: always re-parse, as dagster-dbt intends
        if manifest_is_stale(project):
            project.preparer.prepare(project)
    return project
