"""Bench stage: the structural diagnostics (METHOD 7-10) on the built paper-scale warehouse.

`structure_s`: `dbt build` (models and their tests) of every model under
models/intermediate/structure and models/marts/structure, upstream already built.
`coupling_s`: `dbt run` of the coupling chain alone (the Python models int_coupling_prompt_effects,
fct_coupling and fct_coupling_contrast; the question pairs they read already exist).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from ingestion.paths import PROJECT_ROOT

STRUCTURE = ("path:models/intermediate/structure", "path:models/marts/structure")
COUPLING = ("int_coupling_prompt_effects", "fct_coupling", "fct_coupling_contrast")


def _dbt(command: str, warehouse: Path, work: Path, select: tuple[str, ...]) -> float:
    target = work / "dbt_target_structure"
    env = {**os.environ, "QCT2I_WAREHOUSE": str(warehouse)}
    start = time.perf_counter()
    subprocess.run(
        [
            str(Path(sys.executable).parent / "dbt"),
            command,
            "--quiet",
            "--project-dir",
            str(PROJECT_ROOT),
            "--profiles-dir",
            str(PROJECT_ROOT),
            "--target-path",
            str(target),
            "--log-path",
            str(target),
            "--select",
            *select,
        ],
        check=True,
        env=env,
    )
    return time.perf_counter() - start


def measure(warehouse: Path, bundle: Path, work: Path) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    structure_s = _dbt("build", warehouse, work, STRUCTURE)
    coupling_s = _dbt("run", warehouse, work, COUPLING)
    return {"structure_s": round(structure_s, 2), "coupling_s": round(coupling_s, 2)}


if __name__ == "__main__":
    import json

    warehouse, bundle, work = (Path(a) for a in sys.argv[1:4])
    print(json.dumps(measure(warehouse, bundle, work)))
