"""Bench stage: the structural diagnostics (METHOD 7-10) on the built paper-scale warehouse.

`structure_s`: `dbt build` (models and their tests) of every model under
models/intermediate/structure and models/marts/structure, upstream already built.
`coupling_s`: `dbt run` of the coupling chain alone (the Python models
int_coupling_prompt_effects, int_coupling_draws and int_coupling_intervals, and the marts
fct_coupling and fct_coupling_contrast that present it; the question pairs they read already
exist), with the default (`auto`) bootstrap; `coupling_method` is what `auto` chose (at paper
scale: `linearised`).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import duckdb

from qct2i.dbt_runner import run_dbt

STRUCTURE = ("path:models/intermediate/structure", "path:models/marts/structure")
COUPLING = (
    "int_coupling_prompt_effects",
    "int_coupling_draws",
    "int_coupling_intervals",
    "fct_coupling",
    "fct_coupling_contrast",
)


def _dbt(command: str, warehouse: Path, work: Path, select: tuple[str, ...]) -> float:
    start = time.perf_counter()
    run_dbt(
        command,
        warehouse,
        select=select,
        target_path=work / "dbt_target_structure",
        extra=("--quiet",),
    )
    return time.perf_counter() - start


def measure(warehouse: Path, bundle: Path, work: Path) -> dict:
    work.mkdir(parents=True, exist_ok=True)
    structure_s = _dbt("build", warehouse, work, STRUCTURE)
    coupling_s = _dbt("run", warehouse, work, COUPLING)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        methods = con.execute(
            "select distinct bootstrap_method from marts.fct_coupling order by 1"
        ).fetchall()
    return {
        "structure_s": round(structure_s, 2),
        "coupling_s": round(coupling_s, 2),
        "coupling_method": ",".join(m for (m,) in methods),
    }


if __name__ == "__main__":
    import json

    warehouse, bundle, work = (Path(a) for a in sys.argv[1:4])
    print(json.dumps(measure(warehouse, bundle, work)))
