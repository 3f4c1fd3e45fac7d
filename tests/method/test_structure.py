"""`method.structure` and `method.bootstrap` on hand-computed fixtures: the resampling counts and
the keyed random streams, the macro mean, the root controls and the prompt bootstrap. The coupling
terms are in test_coupling_terms.py, their bootstrap in test_coupling.py.
"""

from __future__ import annotations

import zlib

import numpy as np
import pyarrow as pa
import pytest

from method.bootstrap import resampling_counts, rng_for
from method.structure import MACRO_MODEL, macro_mean, prompt_bootstrap, root_controls


def test_resampling_counts_are_multinomial_resamples():
    counts = resampling_counts(7, 50, np.random.default_rng(0))
    assert counts.shape == (50, 7)
    # the same stream's picks, counted by hand: how often each unit was drawn in each row
    picks = np.random.default_rng(0).integers(0, 7, size=(50, 7))
    expected = [[list(row).count(unit) for unit in range(7)] for row in picks]
    np.testing.assert_array_equal(counts, expected)


# First draws of the keyed streams, listed from the implementation before the simulator's copy
# was folded into `rng_for`: the demo world and every bootstrap interval depend on them.
KEYED_FIRST_DRAWS = {
    (0, "world"): [0.014093857011982291, 0.765387295507119, 0.5285133951255216],
    (20260829, "en"): [0.20402858598071894, 0.4691414029840615, 0.9105425978637308],
    (7, "outcomes", "flux-dev", "zh"): [0.5378210792529023, 0.9965748953219985, 0.6026809660250975],
}


@pytest.mark.parametrize("key", list(KEYED_FIRST_DRAWS))
def test_keyed_rng_is_a_seed_sequence_over_seed_and_key_crcs(key):
    seed, *names = key
    got = rng_for(seed, *names).random(3)
    np.testing.assert_array_equal(got, KEYED_FIRST_DRAWS[key])
    # the same stream built by hand: PCG64 seeded from SeedSequence([seed, crc32(name), ...])
    entropy = [seed, *(zlib.crc32(name.encode("utf-8")) for name in names)]
    by_hand = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))
    np.testing.assert_array_equal(got, by_hand.random(3))


def test_simulator_draws_from_the_library_stream():
    import ingestion.sources.simulator as simulator

    assert simulator.rng_for is rng_for


def test_macro_mean_averages_the_members_defined_in_each_draw():
    estimates = np.array([0.2, 0.4])
    draws = np.array([[0.1, 0.3], [np.nan, 0.5], [np.nan, np.nan]])
    present = np.array([[True, False], [False, False], [False, True], [True, True]])
    estimate, macro_draws, n_units = macro_mean(estimates, draws, present)
    assert estimate == pytest.approx(0.3)
    np.testing.assert_allclose(macro_draws, [0.2, 0.5, np.nan])
    assert n_units == 3  # units 0, 2 and 3 hold a member


# int_root_contexts' columns that root_controls reads
CONTEXTS_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("language", pa.string()),
        ("prompt_id", pa.string()),
        ("local_survival", pa.int32()),
        ("baseline_survival", pa.float64()),
        ("is_eligible", pa.bool_()),
    ]
)


def test_root_controls_by_hand():
    """m1/en: eligible contexts (local, baseline) p1: (1, 0.5), (0, 0); p2: (1, 0.75); an
    ineligible p3 context is left out. Every prompt's mean diff is 0.25, so every resample's
    ratio of sums is 0.25 too and the interval collapses onto it."""
    rows = [
        ("p1", 1, 0.5, True),
        ("p1", 0, 0.0, True),
        ("p2", 1, 0.75, True),
        ("p3", 0, 1.0, False),
    ]
    table = pa.Table.from_pylist(
        [
            {
                "model_id": "m1",
                "language": "en",
                "prompt_id": prompt,
                "local_survival": local,
                "baseline_survival": baseline,
                "is_eligible": eligible,
            }
            for prompt, local, baseline, eligible in rows
        ],
        schema=CONTEXTS_SCHEMA,
    )
    got = root_controls(table, draws=50, seed=3).to_pylist()
    assert len(got) == 1
    row = got[0]
    assert (row["model_id"], row["language"]) == ("m1", "en")
    assert (row["n_contexts"], row["n_prompts"], row["n_draws"]) == (3, 2, 50)
    assert row["local_survival"] == pytest.approx(100 * 2 / 3)
    assert row["baseline_survival"] == pytest.approx(100 * 1.25 / 3)
    # the diff is a ratio of sums over contexts: (0.5 + 0 + 0.25) / 3
    assert row["diff"] == pytest.approx(25.0)
    assert row["ci_lo"] == pytest.approx(25.0)
    assert row["ci_hi"] == pytest.approx(25.0)


def test_root_controls_do_not_depend_on_row_order():
    """The same contexts in another row order give the same figures to the last bit: the
    per-prompt sums and the means add floats, whose last bits follow the order of the terms,
    and a build does not fix the order int_root_contexts' rows are written in. Several contexts
    a prompt with baselines like 0.1 and 0.7, whose sums round differently by order."""
    rng = np.random.default_rng(4)
    rows = [
        {
            "model_id": model,
            "language": language,
            "prompt_id": f"p{p:02d}",
            "local_survival": int(rng.integers(0, 2)),
            "baseline_survival": float(rng.choice([0.1, 0.2, 0.3, 0.7]) + rng.random() / 3),
            "is_eligible": True,
        }
        for model in ("m1", "m2")
        for language in ("en", "zh")
        for p in range(40)
        for _ in range(int(rng.integers(1, 6)))
    ]
    written = pa.Table.from_pylist(rows, schema=CONTEXTS_SCHEMA)
    expected = root_controls(written, draws=200, seed=5).to_pylist()
    for permutation_seed in range(3):
        order = np.random.default_rng(permutation_seed).permutation(len(rows))
        assert root_controls(written.take(order), draws=200, seed=5).to_pylist() == expected


def test_prompt_bootstrap_matches_a_plain_loop():
    rng = np.random.default_rng(1)
    rows = []
    for model in ("m1", "m2"):
        for p in range(12):
            for _ in range(rng.integers(1, 4)):  # several contexts per prompt travel together
                rows.append(
                    {
                        "language": "en",
                        "model_id": model,
                        "prompt_id": f"p{p:02d}",
                        "value": float(rng.normal()),
                    }
                )
    table = pa.Table.from_pylist(rows)
    draws, seed = 300, 7
    got = prompt_bootstrap(
        table,
        split_by=["language"],
        cell_by=["model_id"],
        unit="prompt_id",
        numerator="value",
        denominator=None,
        draws=draws,
        seed=seed,
        macro_over="model_id",
    )
    got = {r["model_id"]: r for r in got}

    # Independent route: replay the same resamples prompt by prompt in plain Python.
    prompts = sorted({r["prompt_id"] for r in rows})
    picks = rng_for(seed, "en").integers(0, len(prompts), size=(draws, len(prompts)))
    per_model_draws = {}
    for model in ("m1", "m2"):
        values = [r["value"] for r in rows if r["model_id"] == model]
        assert got[model]["estimate"] == pytest.approx(np.mean(values))
        by_prompt = {
            p: [r["value"] for r in rows if r["model_id"] == model and r["prompt_id"] == p]
            for p in prompts
        }
        stats = []
        for b in range(draws):
            chosen = [v for i in picks[b] for v in by_prompt[prompts[i]]]
            stats.append(sum(chosen) / len(chosen))
        per_model_draws[model] = np.array(stats)
        lo, hi = np.quantile(stats, [0.025, 0.975])
        assert got[model]["ci_lo"] == pytest.approx(lo)
        assert got[model]["ci_hi"] == pytest.approx(hi)
        assert got[model]["n_units"] == 12
    macro = got[MACRO_MODEL]
    assert macro["estimate"] == pytest.approx((got["m1"]["estimate"] + got["m2"]["estimate"]) / 2)
    macro_draws = (per_model_draws["m1"] + per_model_draws["m2"]) / 2
    assert macro["ci_lo"] == pytest.approx(np.quantile(macro_draws, 0.025))
    assert macro["ci_hi"] == pytest.approx(np.quantile(macro_draws, 0.975))


def test_prompt_bootstrap_is_reproducible_and_row_order_free():
    rows = [{"g": "x", "m": "a", "p": f"p{i}", "v": float(i % 3)} for i in range(20)]
    kwargs = dict(
        split_by=["g"], cell_by=["m"], unit="p", numerator="v", denominator=None, draws=200, seed=3
    )
    first = prompt_bootstrap(pa.Table.from_pylist(rows), **kwargs)
    again = prompt_bootstrap(pa.Table.from_pylist(rows[::-1]), **kwargs)
    assert first == again
