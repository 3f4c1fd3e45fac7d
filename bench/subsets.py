"""Bench stage `subsets`: subset plans and their leave-one-generator-out validation (METHOD 16).

`subset_plan_s`: one `irt` plan at a 20% budget from every generator's evidence (item fit, sizes,
draw). `subset_validation_s`: the whole validation of `agg_subset_validation` at paper scale,
every strategy x budget (2, 5, 10, 20%) x `SEEDS` seeds x held-out generator, from the sufficient
statistics in memory (`subset_validation_load_s` is reading them, apart).

Per strategy and budget it reports the mart's figures (MAE in points, 95% coverage, Spearman and
Kendall of the estimated order) plus the mean estimated standard error (points), which is far
less noisy than the MAE for comparing strategies, `mae_ratio_to_random_ht` (random-ht's MAE over
the row's: the issue's "x times smaller than random" with the design-only baseline), and
`subset_design_bound_se_ratio`: the best standard-error ratio random / any unbiased probability
design could reach at 20% with the `irt` sizes of the design-only estimator,
sqrt((g/f - 1) / (1/f - 1)) with g = C sum(v) / (sum sqrt v)^2 (Neyman allocation).

Strategies: `random`, `stratified`, `irt` with the model-assisted (GREG) estimator, `-ht` the
same plans with the Hajek estimator (METHOD 16, `method.subsets`).

Several worlds: `python -m bench.subsets demo=DEMO.duckdb planted=PLANTED.duckdb` validates each
warehouse (`NAME=` labels it). The planted-effects world is the simulator's with shared prompt
difficulty, e.g. `simulate(out, concepts=PAPER_CONCEPTS, fmt="parquet", prompt_effect_sd=0.8)`
then `qct2i import` and `qct2i build` (the validation reads the intermediate statistics only).
"""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import numpy as np

from method.bootstrap import stats_from_arrow
from method.scores import POINTS
from method.subsets import (
    ESTIMATORS,
    STRATEGIES,
    VALIDATION_BUDGETS,
    Planner,
    make_plan,
    summarise_validation,
    validation_cases,
    validation_scope,
)

SEEDS = 30
STATISTICS = (
    "intermediate.int_prompt_sufficient_stats",
    "seeds.capabilities",
    "intermediate.int_capability_scores",
)


def design_bound(sizes: np.ndarray, frac: float) -> float:
    """SE(random) / SE(best pi-ps design) at sampling fraction `frac` (see the docstring)."""
    g = len(sizes) * (sizes**2).sum() / sizes.sum() ** 2
    return float(np.sqrt((g / frac - 1) / (1 / frac - 1)))


def measure(warehouse: Path, bundle: Path, work: Path) -> dict:
    start = time.perf_counter()
    with duckdb.connect(str(warehouse), read_only=True) as con:
        tables = [con.sql(f"select * from {name}").to_arrow_table() for name in STATISTICS]
    stats = stats_from_arrow(*tables)
    load_s = time.perf_counter() - start

    start = time.perf_counter()
    planner = Planner(stats, tuple(range(len(stats.model_ids))))
    sizes = planner.sizes("irt", "ht")
    make_plan("irt", 0.20, 0, planner, sizes)
    plan_s = time.perf_counter() - start

    start = time.perf_counter()
    scope = validation_scope(stats)  # bilingual, or the one language of an English-only release
    cases = validation_cases(stats, seeds=range(SEEDS), scope=scope)
    validation_s = time.perf_counter() - start

    figures = {}
    rows = summarise_validation(cases)
    random_mae = {r["budget_frac"]: r["mae_points"] for r in rows if r["strategy"] == "random-ht"}
    for row in rows:
        mine = [
            c
            for c in cases
            if c.strategy == row["strategy"] and c.budget_frac == row["budget_frac"]
        ]
        mean_se = np.mean([(c.ci_hi - c.ci_lo) / (2 * 1.959963984540054) for c in mine])
        key = f"{row['strategy']}@{round(100 * row['budget_frac'])}%"
        figures[key] = {
            "mae_points": round(row["mae_points"], 3),
            "mae_ratio_to_random_ht": round(random_mae[row["budget_frac"]] / row["mae_points"], 2),
            "mean_se_points": round(POINTS * float(mean_se), 3),
            "coverage_frac": round(row["coverage_frac"], 3),
            "spearman": round(row["spearman"], 4),
            "kendall": round(row["kendall"], 4),
            "n_cases": row["n_cases"],
        }
    return {
        "subset_validation_load_s": round(load_s, 2),
        "subset_plan_s": round(plan_s, 2),
        "subset_validation_s": round(validation_s, 1),
        "subset_validation_cases": len(cases),
        "subset_validation_grid": {
            "strategies": list(STRATEGIES),
            "estimators": list(ESTIMATORS),
            "budgets": list(VALIDATION_BUDGETS),
            "seeds": SEEDS,
            "generators": len(stats.model_ids),
            "language_scope": scope,
        },
        "subset_design_bound_se_ratio": round(design_bound(sizes, 0.20), 3),
        "subset_validation": figures,
    }


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("warehouse", nargs="+", help="WAREHOUSE or NAME=WAREHOUSE, one per world")
    args = parser.parse_args()
    worlds = dict(w.split("=", 1) if "=" in w else (Path(w).stem, w) for w in args.warehouse)
    results = {name: measure(Path(path), Path(), Path()) for name, path in worlds.items()}
    print(json.dumps(results if len(results) > 1 else next(iter(results.values())), indent=2))
