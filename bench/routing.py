"""Bench stage: the routing marts at paper scale and one live `qct2i route` call.

`router_s`: `dbt build --select` of the routing models (intermediate and marts) and their tests on
the already built warehouse. `route_cli_s`: wall time of one `qct2i route --json` subprocess
for a small new-request file (Python start-up, validation, profile read, ranking).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from qct2i.dbt_runner import run_dbt

NEW_REQUESTS = [
    {"prompt_id": "r1", "question_id": "q1", "text": "a dog?", "capability": "animals",
     "parents": []},
    {"prompt_id": "r1", "question_id": "q2", "text": "brown?", "capability": "color",
     "parents": ["q1"]},
    {"prompt_id": "r2", "question_id": "q1", "text": "a sign?", "capability": "man_made",
     "parents": []},
    {"prompt_id": "r2", "question_id": "q2", "text": "reads OPEN?", "capability": "text_rendering",
     "parents": ["q1"], "text_target": "OPEN"},
    {"prompt_id": "r2", "question_id": "q3", "text": "ukiyo-e?", "capability": "style",
     "parents": []},
]  # fmt: skip


def measure(warehouse: Path, bundle: Path, work: Path) -> dict:
    env = {**os.environ, "QCT2I_WAREHOUSE": str(warehouse)}
    bin_dir = Path(sys.executable).parent
    target = work / "routing_target"
    started = time.perf_counter()
    run_dbt(
        "build",
        warehouse,
        select=("models/intermediate/routing", "models/marts/routing"),
        target_path=target,
    )
    router_s = time.perf_counter() - started

    requests = work / "routing_requests.jsonl"
    requests.write_text("".join(json.dumps(r) + "\n" for r in NEW_REQUESTS), encoding="utf-8")
    started = time.perf_counter()
    subprocess.run(
        [str(bin_dir / "qct2i"), "route", str(requests), "--json"],
        env=env,
        check=True,
        capture_output=True,
    )
    route_cli_s = time.perf_counter() - started
    return {"router_s": round(router_s, 2), "route_cli_s": round(route_cli_s, 2)}


if __name__ == "__main__":
    print(measure(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])))
