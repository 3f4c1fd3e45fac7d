"""The one-home helpers: taxonomy reader, dbt var parsing, the router's percentile interval."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ingestion.paths import SEEDS_DIR
from method.bootstrap import percentile_interval
from method.dbt_vars import var_int, var_list
from method.routing import PAIRED_TAILS
from method.taxonomy import Taxonomy


def test_taxonomy_orders_by_group_then_capability_whatever_the_source():
    rows = [
        {"capability": "b1", "group_key": "B", "group_order": "2", "capability_order": "1"},
        {"capability": "a2", "group_key": "A", "group_order": "1", "capability_order": "3"},
        {"capability": "a1", "group_key": "A", "group_order": "1", "capability_order": "2"},
    ]
    taxonomy = Taxonomy.from_rows(rows)
    assert taxonomy.capabilities == ("a1", "a2", "b1")
    assert taxonomy.groups == ("A", "B") and taxonomy.members("A") == ("a1", "a2")
    assert Taxonomy.from_arrow(pa.Table.from_pylist(rows)) == taxonomy
    seed = Taxonomy.from_csv(SEEDS_DIR / "capabilities.csv")
    # the default seed: 21 capabilities in 5 groups of 5, 1, 6, 4, 5 (METHOD 4)
    assert [len(seed.members(g)) for g in seed.groups] == [5, 1, 6, 4, 5]
    assert seed.group_names[1] == "Text Content"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("['en', 'zh']", ["en", "zh"]),
        ("[flux2-dev, ernie-image]", ["flux2-dev", "ernie-image"]),
        ("flux2-dev, 'ernie-image'", ["flux2-dev", "ernie-image"]),
        ("[]", []),
        ("", []),
        (None, []),
        (("a", "b"), ["a", "b"]),
    ],
)
def test_var_list(text, expected):
    assert var_list(text) == expected


def test_var_int():
    assert var_int("3e8") == 300_000_000
    assert var_int("20260829") == 20260829 and var_int(7) == 7
    with pytest.raises(ValueError):
        var_int("2.5")


def test_router_interval_is_bit_identical_to_nanpercentile():
    rng = np.random.default_rng(3)
    draws = rng.normal(size=(1000, 50))
    draws[::7, 3] = np.nan  # undefined draws are ignored
    lo, hi = percentile_interval(draws, tails=PAIRED_TAILS)
    want = np.nanpercentile(draws, [2.5, 97.5], axis=0)
    assert np.array_equal(lo, want[0]) and np.array_equal(hi, want[1])
    # a 50% interval would be much narrower: the tails matter
    lo50, _ = percentile_interval(draws, level=0.5)
    assert (lo50 > lo + 0.5).all()
