"""Bench stage: the routing marts at paper scale, their figures beside Table 4, and one live
`qct2i route` call.

`router_s`: `dbt build --select` of the routing models (intermediate and marts) and their tests on
the already built warehouse. `route_cli_s`: wall time of one `qct2i route --json` subprocess
for a small new-request file (Python start-up, validation, profile read, ranking).
`router_table4`: per Table 4 row the paper's figures and ours (`marts.agg_router_summary`);
`router_done_when`: issue 13's line on them (Q-Profile-C within `QC_MAX_GAP_POINTS` of ERNIE's
bilingual score at a GPU-s/MP saving of at least `QC_MIN_SAVING`; Q-Profile-Q above every fixed
generator) and whether it holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import duckdb

from qct2i.dbt_runner import run_dbt

# The paper's Table 4, "Out-of-fold routing under HCQ" (../shared/paper/qc-t2i-bench-paper.txt,
# line 35, which holds the whole body): EN, ZH, Bi. (points) and GPU-s/MP per row, keyed by our
# router names (agg_router_summary.router). Rows as printed:
#   ERNIE-Image 89.43 89.58 89.51 28.15 0.0/+55.6%
#   FLUX.2-dev 89.48 88.60 89.04 63.34 -125.0/0.0%
#   Uniform random 85.08 82.62 83.85 19.20 +31.8/+69.7%
#   Q-Profile-Q 89.72 89.98 89.85 46.46 -65.0/+26.7%
#   Q-Profile-C 89.25 89.78 89.51 22.16 +21.3/+65.0%
PAPER_TABLE4: dict[str, dict[str, float]] = {
    router: dict(zip(("en", "zh", "bilingual", "gpu_s_per_mp"), figures, strict=True))
    for router, figures in {
        "fixed:ernie-image": (89.43, 89.58, 89.51, 28.15),
        "fixed:flux2-dev": (89.48, 88.60, 89.04, 63.34),
        "uniform_random": (85.08, 82.62, 83.85, 19.20),
        "q_profile_q": (89.72, 89.98, 89.85, 46.46),
        "q_profile_c": (89.25, 89.78, 89.51, 22.16),
    }.items()
}
ERNIE = "fixed:ernie-image"
# Issue 13's done-when line: the paper's Q-Profile-C matches ERNIE (89.51 vs 89.51) at 21.3% less
# GPU-s/MP; ours must land within 0.3 points of ERNIE at a saving of at least 15%.
QC_MAX_GAP_POINTS = 0.3
QC_MIN_SAVING = 0.15

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


def router_summary(warehouse: Path) -> dict[str, dict[str, float]]:
    """Every router's row of `marts.agg_router_summary`: en, zh, bilingual (points), GPU-s/MP."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            "select router, en, zh, bilingual, gpu_s_per_mp from marts.agg_router_summary"
        ).fetchall()
    keys = ("en", "zh", "bilingual", "gpu_s_per_mp")
    return {router: dict(zip(keys, figures, strict=True)) for router, *figures in rows}


def done_when(summary: Mapping[str, Mapping[str, float]]) -> dict:
    """Issue 13's Table 4 line on our figures: Q-Profile-C within QC_MAX_GAP_POINTS of ERNIE's
    bilingual score and at least QC_MIN_SAVING cheaper; Q-Profile-Q above every fixed generator."""
    ernie, qc, qq = summary[ERNIE], summary["q_profile_c"], summary["q_profile_q"]
    best_fixed = max(
        (r for r in summary if r.startswith("fixed:")), key=lambda r: summary[r]["bilingual"]
    )
    gap = qc["bilingual"] - ernie["bilingual"]
    saving = 1.0 - qc["gpu_s_per_mp"] / ernie["gpu_s_per_mp"]
    qq_margin = qq["bilingual"] - summary[best_fixed]["bilingual"]
    return {
        "qc_minus_ernie_points": round(gap, 3),
        "qc_saving_vs_ernie": round(saving, 4),
        "qq_minus_best_fixed_points": round(qq_margin, 3),
        "best_fixed": best_fixed,
        "holds": abs(gap) <= QC_MAX_GAP_POINTS and saving >= QC_MIN_SAVING and qq_margin > 0,
    }


def beside_table4(summary: Mapping[str, Mapping[str, float]]) -> dict:
    """Per Table 4 row: the paper's figures and ours, rounded as the paper prints them."""
    return {
        router: {
            "paper": paper,
            "ours": {k: round(v, 2) for k, v in summary[router].items()}
            if router in summary
            else None,
        }
        for router, paper in PAPER_TABLE4.items()
    }


def print_table4(table: Mapping[str, Mapping], verdict: Mapping) -> None:
    print(
        f"{'Table 4 row':<20} {'paper EN/ZH/Bi.  GPU-s/MP':>30}   {'ours EN/ZH/Bi.  GPU-s/MP':>30}"
    )
    for router, row in table.items():
        cells = [
            "n/a".rjust(30)
            if figures is None
            else "{en:6.2f} {zh:6.2f} {bilingual:6.2f} {gpu_s_per_mp:9.2f}".format(**figures)
            for figures in (row["paper"], row["ours"])
        ]
        print(f"{router:<20} {cells[0]:>30}   {cells[1]:>30}")
    print(
        f"Q-Profile-C vs ERNIE: {verdict['qc_minus_ernie_points']:+.2f} points, "
        f"{100 * verdict['qc_saving_vs_ernie']:.1f}% less GPU-s/MP; Q-Profile-Q vs the best fixed "
        f"({verdict['best_fixed']}): {verdict['qq_minus_best_fixed_points']:+.2f} points; "
        f"done-when line {'holds' if verdict['holds'] else 'does NOT hold'}"
    )


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

    summary = router_summary(warehouse)
    table, verdict = beside_table4(summary), done_when(summary)
    print_table4(table, verdict)
    return {
        "router_s": round(router_s, 2),
        "route_cli_s": round(route_cli_s, 2),
        "router_table4": table,
        "router_done_when": verdict,
    }


if __name__ == "__main__":
    print(measure(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])))
