"""Each SQL formula macro against its numpy twin, bit for bit, on the same inputs: the macro is
rendered with Jinja (as dbt renders it) and run in DuckDB."""

from __future__ import annotations

import itertools
from pathlib import Path

import duckdb
import jinja2
import numpy as np
import pytest

from method.scores import bilingual_mean, capability_score

MACROS = Path(__file__).resolve().parents[2] / "macros"


def render_macro(name: str, *args, **kwargs) -> str:
    template = jinja2.Template((MACROS / f"{name}.sql").read_text())
    return str(getattr(template.module, name)(*args, **kwargs))


def sql_values(sql_expr: str, columns: dict[str, list]) -> np.ndarray:
    """Evaluate `sql_expr` over rows made of `columns` in DuckDB, NULL read back as NaN."""
    names = list(columns)
    rows = list(zip(*columns.values(), strict=True))
    with duckdb.connect() as con:
        con.execute(f"create table t ({', '.join(f'{n} {_sql_type(columns[n])}' for n in names)})")
        con.executemany(f"insert into t values ({', '.join('?' for _ in names)})", rows)
        got = con.execute(f"select {sql_expr} from t order by rowid").fetchall()
    return np.array([np.nan if v is None else v for (v,) in got], dtype=float)


def _sql_type(values: list) -> str:
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if all(isinstance(v, int) for v in values):
        return "bigint"
    return "double"


# integer sums as the marts hold them: L - D / L (D up to L, so 0 <= num <= den) and counts
PAIRS = [(n, d) for d, n in itertools.product(range(0, 40), range(0, 40)) if n <= d]
PAIRS += [(1234, 4321), (7, 3), (99991, 100003), (0, 0), (5, 0)]


@pytest.mark.parametrize("one_minus_distance", [False, True])
def test_capability_score_macro_equals_twin(one_minus_distance):
    num = [n for n, _ in PAIRS]
    den = [d for _, d in PAIRS]
    flag = [one_minus_distance] * len(PAIRS)
    sql = render_macro("capability_score", "num", "den", one_minus_distance="flag")
    got = sql_values(sql, {"num": num, "den": den, "flag": flag})
    want = capability_score(np.array(num), np.array(den), np.array(flag))
    assert np.array_equal(got, want, equal_nan=True)
    # and by hand: 2 / 3 of a text target matched; 0 / 0 is no evidence
    i, j = PAIRS.index((2, 3)), PAIRS.index((0, 0))
    assert got[i] == pytest.approx(2 / 3) and np.isnan(got[j])


def test_the_two_evaluation_orders_of_eq3_differ_by_at_most_one_ulp_of_one():
    # 1 - D / L with D = 1, L = 3 rounds to 0.6666666666666667, (L - D) / L to ...66
    assert capability_score(2, 3, True) == 1 - 1 / 3
    assert capability_score(2, 3, False) == 2 / 3
    assert capability_score(2, 3, True) != capability_score(2, 3, False)
    num, den = np.array([(n, d) for n, d in PAIRS if n <= d], dtype=float).T
    gap = np.abs(capability_score(num, den, True) - capability_score(num, den, False))
    assert np.nanmax(gap) <= np.spacing(1.0)


def test_bilingual_mean_macro_equals_twin():
    rng = np.random.default_rng(7)
    first = [*rng.random(500), 0.1, None, 0.3]
    second = [*rng.random(500), 0.2, 0.4, None]
    got = sql_values(render_macro("bilingual_mean", "a", "b"), {"a": first, "b": second})
    to_array = np.array([np.nan if v is None else v for v in first], dtype=float)
    want = bilingual_mean(to_array, [np.nan if v is None else v for v in second])
    assert np.array_equal(got, want, equal_nan=True)
    assert got[500] == pytest.approx(0.15) and np.isnan(got[501]) and np.isnan(got[502])
