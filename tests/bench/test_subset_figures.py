"""bench.subsets' tables for `make subset-figures`: one table per world, strategies x budgets,
each cell the figures in the documented order, read back from a hand-made result."""

from __future__ import annotations

from pathlib import Path

from bench.subsets import markdown, world


def figure(mae, ratio, coverage, spearman, kendall):
    return {
        "mae_points": mae,
        "mae_ratio_to_random_ht": ratio,
        "coverage_frac": coverage,
        "spearman": spearman,
        "kendall": kendall,
    }


def test_markdown_lays_out_each_world_as_strategies_by_budgets():
    result = {
        "prompt_effect_sd_hat": 1.565,
        "subset_validation_grid": {
            "budgets": [0.02, 0.2],
            "generators": 13,
            "seeds": 30,
            "language_scope": "bilingual",
        },
        "subset_validation": {
            "random-ht@2%": figure(1.178, 1.0, 0.905, 0.977, 0.917),
            "random-ht@20%": figure(0.307, 1.0, 0.951, 0.996, 0.98),
            "irt@2%": figure(0.586, 2.01, 0.936, 0.974, 0.909),
            "irt@20%": figure(0.163, 1.88, 0.946, 0.996, 0.981),
        },
    }
    lines = markdown({"calibrated": result}).splitlines()
    assert lines[0] == (
        "### calibrated: prompt_effect_sd_hat 1.565, 13 generators, 30 seeds, bilingual"
    )
    assert lines[2:4] == ["| strategy | 2% | 20% |", "| --- | --- | --- |"]
    assert lines[4] == "| random-ht | 1.178/1.00/0.905/0.977/0.917 | 0.307/1.00/0.951/0.996/0.980 |"
    assert lines[5] == "| irt | 0.586/2.01/0.936/0.974/0.909 | 0.163/1.88/0.946/0.996/0.981 |"


def test_a_world_is_a_warehouse_path_unless_it_asks_for_a_simulation(tmp_path):
    assert world("mine", str(tmp_path / "w.duckdb")) == Path(tmp_path / "w.duckdb")
