"""The layers of the README's module map, as import-linter checks them in `make lint`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("method", "ingestion", "reporting", "dagster_defs", "qct2i")


def _lint_imports(tree: Path) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"]
    env = {"PYTHONPATH": str(tree), "PATH": str(Path(sys.executable).parent)}
    return subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)


def _copy_tree(tmp_path: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_keeps_every_layer_contract(tmp_path):
    result = _lint_imports(_copy_tree(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # the method library imports no warehouse code
        ("method/hcq.py", "import duckdb", "method.hcq -> duckdb"),
        # a lower layer never imports the app
        ("dagster_defs/project.py", "import qct2i.cli", "dagster_defs.project -> qct2i.cli"),
        # issue 33: the shared pieces sit below the modules that use them; an import back up, even
        # at call time inside a function (how the old cycles hid), breaks the lint
        (
            "qct2i/writer_commands.py",
            "def _probe(): import qct2i.cli",
            "qct2i.writer_commands -> qct2i.cli",
        ),
        (
            "dagster_defs/pipeline.py",
            "def _probe(): import dagster_defs.definitions",
            "dagster_defs.pipeline -> dagster_defs.definitions",
        ),
        # reporting reads the warehouse below the Dagster wiring, and never imports it or dbt
        ("reporting/reader.py", "import dagster_defs", "reporting.reader -> dagster_defs"),
        ("reporting/facts.py", "import dagster", "reporting.facts -> dagster"),
        # ingestion stays plain Python
        ("ingestion/bundle/load.py", "import dagster", "ingestion.bundle.load -> dagster"),
        # ingestion's parts: the sources never reach into the store, nor the bundle above itself
        (
            "ingestion/sources/simulator/__init__.py",
            "import ingestion.store.warehouse",
            "ingestion.sources.simulator -> ingestion.store.warehouse",
        ),
        (
            "ingestion/bundle/read.py",
            "import ingestion.sources.dsg_release",
            "ingestion.bundle.read -> ingestion.sources.dsg_release",
        ),
        # a driver reaches an implementation only through the registry
        (
            "ingestion/backends/drivers/runs.py",
            "import ingestion.backends.models.transformers_vl",
            "ingestion.backends.drivers.runs -> ingestion.backends.models.transformers_vl",
        ),
        # the interfaces import no ML library
        (
            "ingestion/backends/api/cache.py",
            "import torch",
            "ingestion.backends.api.cache -> torch",
        ),
    ],
)
def test_an_import_across_the_layers_breaks_the_lint(tmp_path, module, line, broken):
    tree = _copy_tree(tmp_path)
    with (tree / module).open("a") as source:
        source.write(f"\n{line}  # noqa: E402, F401\n")
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert broken in result.stdout
