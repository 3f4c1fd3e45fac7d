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

`prompt_effect_sd_hat` is the warehouse's shared prompt difficulty (`method.prompt_difficulty`,
the simulator's `prompt_effect_sd` estimated back): what decides how much a subset can save.

Several worlds: `python -m bench.subsets demo=DEMO.duckdb planted=PLANTED.duckdb` validates each
warehouse (`NAME=` labels it); `NAME=sim:SD` first builds the paper-scale simulated world with
`prompt_effect_sd` SD under `bench/work/subsets/NAME` as a user would (`simulate`, `qct2i import`,
`qct2i build`). `make subset-figures` validates the three worlds docs/subsets.md quotes: the demo
world (SD 0), a planted one (0.8) and the one calibrated to the real DSG release (1.6, the sd
PaLI-17B's judgments show on TIFA160, `make dsg-figures`).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import duckdb
import numpy as np

from bench.commands import qct2i
from method.bootstrap import stats_from_arrow
from method.prompt_difficulty import prompt_difficulty
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
    difficulty = prompt_difficulty(stats.numerator, stats.denominator)
    difficulty_s = time.perf_counter() - start

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
        "prompt_effect_sd_hat": round(difficulty.sd, 3),
        "prompt_effect_log_likelihood_ratio": round(difficulty.log_likelihood_ratio, 1),
        "prompt_effect_s": round(difficulty_s, 1),
        "subset_validation": figures,
    }


def simulated_world(name: str, prompt_effect_sd: float) -> Path:
    """The paper-scale simulated world with `prompt_effect_sd`, built as a user builds one, under
    bench/work/subsets/NAME; its warehouse."""
    from ingestion.sources.simulator import PAPER_CONCEPTS, SimulationConfig, simulate

    root = Path(__file__).parent / "work" / "subsets" / name
    bundle, warehouse = root / "bundle", root / "warehouse.duckdb"
    shutil.rmtree(root, ignore_errors=True)  # a fresh world each time
    config = SimulationConfig(
        concepts=PAPER_CONCEPTS, fmt="parquet", prompt_effect_sd=prompt_effect_sd
    )
    simulate(bundle, config)
    qct2i(["import", str(bundle)], warehouse)
    qct2i(["build"], warehouse)
    return warehouse


def markdown(results: dict[str, dict]) -> str:
    """Per world: its shared prompt difficulty, then strategies x budgets, each cell MAE (points) /
    MAE ratio to `random-ht` / 95% coverage / Spearman / Kendall (the RESULTS tables)."""
    lines = []
    for name, result in results.items():
        figures, grid = result["subset_validation"], result["subset_validation_grid"]
        budgets = [f"{round(100 * b)}%" for b in grid["budgets"]]
        lines += [
            f"### {name}: prompt_effect_sd_hat {result['prompt_effect_sd_hat']}, "
            f"{grid['generators']} generators, {grid['seeds']} seeds, {grid['language_scope']}",
            "",
            "| strategy | " + " | ".join(budgets) + " |",
            "| --- |" + " --- |" * len(budgets),
        ]
        labels = dict.fromkeys(key.split("@")[0] for key in figures)
        for label in labels:
            cells = []
            for budget in budgets:
                f = figures[f"{label}@{budget}"]
                cells.append(
                    f"{f['mae_points']:.3f}/{f['mae_ratio_to_random_ht']:.2f}/"
                    f"{f['coverage_frac']:.3f}/{f['spearman']:.3f}/{f['kendall']:.3f}"
                )
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def world(name: str, source: str) -> Path:
    """A warehouse path, or `sim:SD` for a simulated world built here."""
    if source.startswith("sim:"):
        return simulated_world(name, float(source.removeprefix("sim:")))
    return Path(source)


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "warehouse", nargs="+", help="WAREHOUSE, NAME=WAREHOUSE or NAME=sim:SD, one per world"
    )
    parser.add_argument("--markdown", type=Path, help="also write the tables to this file")
    args = parser.parse_args()
    worlds = dict(w.split("=", 1) if "=" in w else (Path(w).stem, w) for w in args.warehouse)
    results = {name: measure(world(name, src), Path(), Path()) for name, src in worlds.items()}
    print(json.dumps(results if len(results) > 1 else next(iter(results.values())), indent=2))
    if args.markdown:
        args.markdown.write_text(markdown(results))
