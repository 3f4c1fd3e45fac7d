"""`method.structure.prompt_bootstrap` at its edges (METHOD 13-14 root controls' intervals): a
denominator column, units with no evidence, a generator without any, one draw, another level;
holes `make mutation` found (issue 36). Expected values by hand, the draws replayed in plain
Python from the same resampling stream (as `test_structure.py` does)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from method.bootstrap import rng_for
from method.structure import MACRO_MODEL, prompt_bootstrap
from method.structure.roots import ratio_draws

# Model m: p0 1 of 2, p1 3 of 4, p2 0 of 0 (no evidence); model z: p0 and p1 with 0 of 0, no p2
# row at all (so the last unit x cell pair is absent).
ROWS = [
    ("m", "p0", 1.0, 2.0),
    ("m", "p1", 3.0, 4.0),
    ("m", "p2", 0.0, 0.0),
    ("z", "p0", 0.0, 0.0),
    ("z", "p1", 0.0, 0.0),
]
TABLE = pa.Table.from_pylist(
    [{"language": "en", "model_id": m, "prompt_id": p, "yes": y, "n": n} for m, p, y, n in ROWS]
)


def bootstrap(draws, level=0.5):
    return prompt_bootstrap(
        TABLE,
        split_by=["language"],
        cell_by=["model_id"],
        unit="prompt_id",
        numerator="yes",
        denominator="n",
        draws=draws,
        seed=11,
        level=level,
    )


def test_prompt_bootstrap_with_a_denominator_by_hand():
    """Guards the ratio of sums with its denominator column (4/6, not 4 of 3 rows), the units
    counted only where the denominator is positive (2), the interval at the level asked for
    (the 25th and 75th percentiles of the replayed draws), and a generator without any evidence
    null throughout (not NaN)."""
    got = {r["model_id"]: r for r in bootstrap(draws=40)}
    assert got["m"]["estimate"] == pytest.approx(4 / 6)
    assert got["m"]["n_units"] == 2
    yes, n = {"p0": 1.0, "p1": 3.0, "p2": 0.0}, {"p0": 2.0, "p1": 4.0, "p2": 0.0}
    prompts = ["p0", "p1", "p2"]
    picks = rng_for(11, "en").integers(0, 3, size=(40, 3))
    draws = []
    for row in picks:
        total = sum(n[prompts[i]] for i in row)
        draws.append(sum(yes[prompts[i]] for i in row) / total if total else np.nan)
    lo, hi = np.nanquantile(draws, [0.25, 0.75])
    assert lo < hi  # the draws differ, so the level shows
    assert (got["m"]["ci_lo"], got["m"]["ci_hi"]) == (pytest.approx(lo), pytest.approx(hi))
    assert got["z"] == {
        "language": "en",
        "model_id": "z",
        "estimate": None,
        "ci_lo": None,
        "ci_hi": None,
        "n_units": 0,
    }


def test_prompt_bootstrap_takes_one_draw_and_refuses_none():
    """Guards the draws' bound: one draw is enough (its interval is that draw), none is refused
    with the count in the message."""
    (m, _) = bootstrap(draws=1)
    assert m["ci_lo"] == m["ci_hi"]
    with pytest.raises(ValueError) as refused:
        bootstrap(draws=0)
    assert str(refused.value) == "draws must be >= 1, got 0"


def test_prompt_bootstrap_without_splits_or_cells_pools_everything():
    """Guards the empty key lists: no split and no cell give one row over every row, (1 + 3) /
    (2 + 4), from the two units with evidence."""
    (row,) = prompt_bootstrap(
        TABLE,
        split_by=[],
        cell_by=[],
        unit="prompt_id",
        numerator="yes",
        denominator="n",
        draws=5,
        seed=11,
    )
    assert row["estimate"] == pytest.approx(4 / 6)
    assert row["n_units"] == 2


def test_a_denominator_of_one_is_enough_for_an_estimate():
    """Guards the defined test of a ratio of sums as a positive denominator: one question with
    one success is 1.0, not undefined."""
    estimate, draws = ratio_draws(np.array([[1.0]]), np.array([[1.0]]), np.array([[1.0]]))
    assert estimate.tolist() == [1.0] and draws.tolist() == [[1.0]]


def test_the_macro_row_counts_the_units_where_a_member_has_evidence():
    """Guards the macro mean over models: members are the models with an estimate (m; z has
    none), its estimate theirs (4/6), its units those where a member has a positive denominator
    (p0 and p1, not p2 with 0 of 0)."""
    rows = prompt_bootstrap(
        TABLE,
        split_by=["language"],
        cell_by=["model_id"],
        unit="prompt_id",
        numerator="yes",
        denominator="n",
        draws=5,
        seed=11,
        macro_over="model_id",
    )
    (macro,) = [r for r in rows if r["model_id"] == MACRO_MODEL]
    assert macro["estimate"] == pytest.approx(4 / 6)
    assert macro["n_units"] == 2
