"""`method.structure`: coupling terms and the prompt bootstrap on hand-computed fixtures."""

from __future__ import annotations

import zlib

import numpy as np
import pyarrow as pa
import pytest

from method.bootstrap import resampling_counts, rng_for
from method.structure import (
    EFFECTS,
    MACRO_MODEL,
    coupling_bootstrap,
    coupling_cells,
    coupling_influence,
    coupling_inputs,
    coupling_prompt_effects,
    macro_mean,
    prompt_bootstrap,
    root_controls,
)

NAN = None
S0, S1 = "a|b|root|descendant|0|1", "c|d|root|descendant|0|1"

# (prompt, language, context, stratum, (y1, y2)) for model m; each pair gets fresh question ids.
PAIRS = [
    ("p0", "en", "edge", S0, (1, 1)),
    ("p0", "en", "edge", S1, (1, 0)),  # S1 occurs in no other prompt: no marginal, no Delta
    ("p0", "en", "disc", S0, (1, 0)),
    ("p0", "en", "nonanc", S0, (1, 1)),
    ("p1", "en", "edge", S0, (0, 0)),
    ("p1", "en", "disc", S0, (1, 1)),
    ("p1", "en", "nonanc", S0, (1, 0)),
    ("p2", "en", "edge", S0, (1, 1)),
    ("p2", "en", "edge", S0, (1, 0)),
    ("p2", "en", "edge", S0, (1, NAN)),  # missing judgment: the pair is left out
    ("p2", "en", "disc", S0, (0, 1)),
    ("p3", "zh", "edge", S0, (1, 1)),  # the only zh prompt: languages are never pooled
]


def hand_tables(pairs=PAIRS):
    pair_rows, records = [], []
    for k, (prompt, language, context, stratum, (y1, y2)) in enumerate(pairs):
        q1, q2 = f"q{2 * k}", f"q{2 * k + 1}"
        pair_rows.append(
            {
                "prompt_id": prompt,
                "language": language,
                "context": context,
                "question_id_1": q1,
                "question_id_2": q2,
                "stratum_key": stratum,
            }
        )
        for q, y in ((q1, y1), (q2, y2)):
            records.append({"model_id": "m", "prompt_id": prompt, "question_id": q, "outcome": y})
    return pa.Table.from_pylist(pair_rows), pa.Table.from_pylist(records)


def effects_by_key(table: pa.Table) -> dict[tuple[str, str], float]:
    return {(r["prompt_id"], r["effect"]): r["effect_value"] for r in table.to_pylist()}


def test_coupling_deltas_use_leave_one_prompt_out_marginals():
    got = effects_by_key(coupling_prompt_effects(*hand_tables()))
    # edge, stratum S0 (pairs judged at both ends): p0 (1,1); p1 (0,0); p2 (1,1), (1,0).
    # p0: joint 1; others p1+p2: pi1 = 2/3, pi2 = 1/3  -> 1 - 2/9 = 7/9
    # p1: joint 0; others p0+p2: pi1 = 3/3, pi2 = 2/3  -> -2/3
    # p2: joint 1/2; others p0+p1: pi1 = 1/2, pi2 = 1/2 -> 1/4
    expected_edge = {"p0": 7 / 9, "p1": -2 / 3, "p2": 1 / 4}
    # disc S0: p0 (1,0); p1 (1,1); p2 (0,1).
    # p0: joint 0; others p1+p2: pi1 = 1/2, pi2 = 2/2 -> -1/2
    # p1: 1 - (1/2)(1/2) = 3/4;  p2: 0 - (2/2)(1/2) = -1/2
    expected_disc = {"p0": -1 / 2, "p1": 3 / 4, "p2": -1 / 2}
    # nonanc S0: p0 (1,1), p1 (1,0). p0: 1 - 1*0 = 1; p1: 0 - 1*1 = -1
    expected_nonanc = {"p0": 1.0, "p1": -1.0}
    for prompt, value in expected_edge.items():
        assert got[prompt, "edge"] == pytest.approx(value)
    for prompt, value in expected_disc.items():
        assert got[prompt, "disc"] == pytest.approx(value)
    for prompt, value in expected_nonanc.items():
        assert got[prompt, "nonanc"] == pytest.approx(value)
    # contrasts: Delta_k - Delta_disc over the shared stratum S0
    assert got["p0", "edge_vs_disc"] == pytest.approx(7 / 9 + 1 / 2)
    assert got["p1", "edge_vs_disc"] == pytest.approx(-2 / 3 - 3 / 4)
    assert got["p2", "edge_vs_disc"] == pytest.approx(1 / 4 + 1 / 2)
    assert got["p0", "nonanc_vs_disc"] == pytest.approx(1 + 1 / 2)
    assert got["p1", "nonanc_vs_disc"] == pytest.approx(-1 - 3 / 4)
    assert ("p2", "nonanc_vs_disc") not in got  # p2 has no nonanc pair
    assert not any(prompt == "p3" for prompt, _ in got)  # zh: no other prompt, no marginal


def test_own_prompt_never_enters_its_marginal():
    """Flipping p0's own outcomes changes p0's joint term only, never its marginals."""
    flipped = [
        (p, lang, c, s, (1 - y[0], y[1]) if (p, c, s) == ("p0", "edge", S0) else y)
        for p, lang, c, s, y in PAIRS
    ]
    before = effects_by_key(coupling_prompt_effects(*hand_tables()))
    after = effects_by_key(coupling_prompt_effects(*hand_tables(flipped)))
    # p0 edge: joint 1 -> 0, marginals from p1 and p2 unchanged: 7/9 - 1 = -2/9
    assert after["p0", "edge"] == pytest.approx(before["p0", "edge"] - 1)
    # p1's marginals do include p0: pi1 = (0 + 2) / 3 instead of 3 / 3
    assert after["p1", "edge"] == pytest.approx(0 - (2 / 3) * (2 / 3))


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
        schema=pa.schema(
            [
                ("model_id", pa.string()),
                ("language", pa.string()),
                ("prompt_id", pa.string()),
                ("local_survival", pa.int32()),
                ("baseline_survival", pa.float64()),
                ("is_eligible", pa.bool_()),
            ]
        ),
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


def random_coupling_world(seed: int, sizes=(("en", 9), ("zh", 6)), models=("m1", "m2")):
    """A small world: prompts with 5 questions, random pairs/contexts/strata, 2 models, gaps."""
    rng = np.random.default_rng(seed)
    strata = ["a|a|root|root|0|0", "a|b|root|descendant|0|1", "b|c|descendant|root|1|0"]
    pair_rows, records = [], []
    for language, n_prompts in sizes:
        for p in range(n_prompts):
            prompt = f"{language}{p}"
            candidates = [(i, j) for i in range(5) for j in range(i + 1, 5)]
            for k in rng.choice(len(candidates), size=int(rng.integers(2, 8)), replace=False):
                i, j = candidates[k]
                pair_rows.append(
                    {
                        "prompt_id": prompt,
                        "language": language,
                        "context": str(rng.choice(CONTEXT_NAMES)),
                        "question_id_1": f"q{i}",
                        "question_id_2": f"q{j}",
                        "stratum_key": str(rng.choice(strata)),
                    }
                )
            for model in models:
                for q in range(5):
                    y = None if rng.random() < 0.1 else int(rng.random() < 0.6)
                    records.append(
                        {
                            "model_id": model,
                            "prompt_id": prompt,
                            "question_id": f"q{q}",
                            "outcome": y,
                        }
                    )
    return pa.Table.from_pylist(pair_rows), pa.Table.from_pylist(records)


CONTEXT_NAMES = ("edge", "nonanc", "disc")


def brute_force_statistics(pair_rows, outcome, copies):
    """Delta/Gamma of the resampled world built by duplicating prompts, in plain Python.

    `copies`: list of origin prompt ids, one entry per copy (a prompt drawn twice appears twice).
    A copy's marginals pool the pairs of every copy of a DIFFERENT origin prompt. Returns
    {effect: statistic or None} = mean over the copies that have the effect."""
    pairs_of = {}
    for r in pair_rows:
        pairs_of.setdefault(r["prompt_id"], []).append(r)

    def judged(origin):
        for r in pairs_of[origin]:
            y1 = outcome.get((origin, r["question_id_1"]))
            y2 = outcome.get((origin, r["question_id_2"]))
            if y1 is not None and y2 is not None:
                yield r["context"], r["stratum_key"], y1, y2

    def delta(origin, context, stratum):
        own = [(a, b) for c, s, a, b in judged(origin) if (c, s) == (context, stratum)]
        others = [
            (a, b)
            for other in copies
            if other != origin
            for c, s, a, b in judged(other)
            if (c, s) == (context, stratum)
        ]
        if not own or not others:
            return None
        joint = sum(a * b for a, b in own) / len(own)
        pi1 = sum(a for a, _ in others) / len(others)
        pi2 = sum(b for _, b in others) / len(others)
        return joint - pi1 * pi2

    terms = {e: [] for e in (*CONTEXT_NAMES, "edge_vs_disc", "nonanc_vs_disc")}
    for origin in copies:  # every copy contributes its own term
        strata = {(c, s) for c, s, _, _ in judged(origin)}
        deltas = {cs: delta(origin, *cs) for cs in strata}
        deltas = {cs: d for cs, d in deltas.items() if d is not None}
        for context in CONTEXT_NAMES:
            values = [d for (c, _), d in deltas.items() if c == context]
            if values:
                terms[context].append(sum(values) / len(values))
        for context in ("edge", "nonanc"):
            diffs = [
                d - deltas["disc", s]
                for (c, s), d in deltas.items()
                if c == context and ("disc", s) in deltas
            ]
            if diffs:
                terms[f"{context}_vs_disc"].append(sum(diffs) / len(diffs))
    return {e: (sum(v) / len(v) if v else None) for e, v in terms.items()}


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_coupling_bootstrap_recomputes_marginals_like_a_duplicated_world():
    """method="exact": every draw equals a from-scratch recomputation on the resampled world."""
    pairs, records = random_coupling_world(5)
    draws, seed = 40, 11
    got = {
        (r["language"], r["model_id"], r["effect"]): r
        for r in coupling_bootstrap(pairs, records, draws=draws, seed=seed, method="exact")
    }
    pair_rows = pairs.to_pylist()
    n_checked = 0
    for language in ("en", "zh"):
        prompts = sorted({r["prompt_id"] for r in pair_rows if r["language"] == language})
        rows = [r for r in pair_rows if r["language"] == language]
        picks = rng_for(seed, language).integers(0, len(prompts), size=(draws, len(prompts)))
        per_model = {}
        for model in ("m1", "m2"):
            outcome = {
                (r["prompt_id"], r["question_id"]): r["outcome"]
                for r in records.to_pylist()
                if r["model_id"] == model
            }
            point = brute_force_statistics(rows, outcome, prompts)
            replay = [
                brute_force_statistics(rows, outcome, [prompts[i] for i in picks[b]])
                for b in range(draws)
            ]
            per_model[model] = (point, replay)
            for effect, value in point.items():
                if value is None:
                    assert (language, model, effect) not in got
                    continue
                row = got[language, model, effect]
                stats = np.array([np.nan if r[effect] is None else r[effect] for r in replay])
                lo, hi = np.nanquantile(stats, [0.025, 0.975])
                assert row["estimate"] == pytest.approx(value, abs=1e-12)
                assert (row["ci_lo"], row["ci_hi"]) == pytest.approx((lo, hi), abs=1e-12)
                n_checked += 1
        # the macro's draws: mean over the models defined on the full sample
        for effect in per_model["m1"][0]:
            members = [m for m in ("m1", "m2") if per_model[m][0][effect] is not None]
            if not members:
                continue
            macro = [
                np.nanmean(
                    [
                        np.nan if per_model[m][1][b][effect] is None else per_model[m][1][b][effect]
                        for m in members
                    ]
                )
                for b in range(draws)
            ]
            row = got[language, MACRO_MODEL, effect]
            assert row["ci_lo"] == pytest.approx(np.nanquantile(macro, 0.025), abs=1e-12)
            assert row["ci_hi"] == pytest.approx(np.nanquantile(macro, 0.975), abs=1e-12)
    assert n_checked >= 12  # the world really exercises contexts and contrasts in both languages


@pytest.mark.parametrize("method", ["linearised", "exact"])
def test_coupling_bootstrap_point_estimates_are_prompt_means_of_the_per_prompt_terms(method):
    pairs, records = random_coupling_world(8)
    effects = coupling_prompt_effects(pairs, records).to_pylist()
    for row in coupling_bootstrap(pairs, records, draws=5, seed=1, method=method):
        if row["model_id"] == MACRO_MODEL:
            continue
        values = [
            e["effect_value"]
            for e in effects
            if (e["language"], e["model_id"], e["effect"])
            == (row["language"], row["model_id"], row["effect"])
        ]
        assert row["n_units"] == len(values)
        assert row["estimate"] == pytest.approx(np.mean(values), abs=1e-12)


def brute_force_weighted_statistics(pair_rows, outcome, weights):
    """Delta/Gamma of a world where prompt p carries real weight w_p, in plain Python.

    Generalises `brute_force_statistics` from integer copies to real weights: a prompt's
    marginals pool the other prompts' judged pairs with their weights, and its term enters the
    mean with its weight. Returns {effect: statistic or None}."""
    pairs_of = {}
    for r in pair_rows:
        pairs_of.setdefault(r["prompt_id"], []).append(r)

    def judged(origin):
        for r in pairs_of[origin]:
            y1 = outcome.get((origin, r["question_id_1"]))
            y2 = outcome.get((origin, r["question_id_2"]))
            if y1 is not None and y2 is not None:
                yield r["context"], r["stratum_key"], y1, y2

    def delta(origin, context, stratum):
        own = [(a, b) for c, s, a, b in judged(origin) if (c, s) == (context, stratum)]
        n = t1 = t2 = 0.0
        for other, w in weights.items():
            if other == origin:
                continue
            for c, s, a, b in judged(other):
                if (c, s) == (context, stratum):
                    n, t1, t2 = n + w, t1 + w * a, t2 + w * b
        if not own or n == 0:
            return None
        return sum(a * b for a, b in own) / len(own) - (t1 / n) * (t2 / n)

    sums = {e: [0.0, 0.0] for e in (*CONTEXT_NAMES, "edge_vs_disc", "nonanc_vs_disc")}
    for origin, w in weights.items():
        strata = {(c, s) for c, s, _, _ in judged(origin)}
        deltas = {cs: delta(origin, *cs) for cs in strata}
        deltas = {cs: d for cs, d in deltas.items() if d is not None}
        terms = {}
        for context in CONTEXT_NAMES:
            values = [d for (c, _), d in deltas.items() if c == context]
            if values:
                terms[context] = sum(values) / len(values)
        for context in ("edge", "nonanc"):
            diffs = [
                d - deltas["disc", s]
                for (c, s), d in deltas.items()
                if c == context and ("disc", s) in deltas
            ]
            if diffs:
                terms[f"{context}_vs_disc"] = sum(diffs) / len(diffs)
        for effect, term in terms.items():
            sums[effect][0] += w * term
            sums[effect][1] += w
    return {e: (num / den if den else None) for e, (num, den) in sums.items()}


def test_coupling_influence_is_the_derivative_in_the_prompt_weights():
    """IF_p = d theta / d w_p at w = 1, against central differences of a plain-Python world."""
    pairs, records = random_coupling_world(5)
    pair_rows = pairs.to_pylist()
    outcomes, model_ids, endpoints, codes = coupling_inputs(pairs, records)
    languages, pair_language = codes["language"]
    h = 1e-6
    n_checked = 0
    for code, language in enumerate(languages):
        sel = np.flatnonzero(pair_language == code)
        local_ids, prompt_local = np.unique(codes["prompt"][1][sel], return_inverse=True)
        prompts = list(codes["prompt"][0][local_ids])
        cells = coupling_cells(
            outcomes,
            endpoints[0][sel],
            endpoints[1][sel],
            prompt_local,
            codes["context"][sel],
            codes["stratum"][sel],
        )
        estimate, influence, _ = coupling_influence(cells)
        rows = [r for r in pair_rows if r["language"] == language]
        for m, model in enumerate(model_ids):
            outcome = {
                (r["prompt_id"], r["question_id"]): r["outcome"]
                for r in records.to_pylist()
                if r["model_id"] == model
            }
            point = brute_force_weighted_statistics(rows, outcome, dict.fromkeys(prompts, 1.0))
            for p, prompt in enumerate(prompts):
                up = brute_force_weighted_statistics(
                    rows, outcome, {q: 1.0 + h * (q == prompt) for q in prompts}
                )
                down = brute_force_weighted_statistics(
                    rows, outcome, {q: 1.0 - h * (q == prompt) for q in prompts}
                )
                for e, effect in enumerate(EFFECTS):
                    if point[effect] is None:
                        assert np.isnan(estimate[m, e])
                        continue
                    assert estimate[m, e] == pytest.approx(point[effect], abs=1e-12)
                    derivative = (up[effect] - down[effect]) / (2 * h)
                    assert influence[m, e, p] == pytest.approx(derivative, abs=1e-6)
                    n_checked += 1
    assert n_checked >= 100


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_linearised_coupling_intervals_are_close_to_the_exact_ones():
    """150 + 100 random prompts, 3 models: linearised endpoints within 25% of the exact width."""
    pairs, records = random_coupling_world(3, (("en", 150), ("zh", 100)), ("m1", "m2", "m3"))
    kwargs = {"draws": 400, "seed": 7}
    exact = {
        (r["language"], r["model_id"], r["effect"]): r
        for r in coupling_bootstrap(pairs, records, method="exact", **kwargs)
    }
    linear = {
        (r["language"], r["model_id"], r["effect"]): r
        for r in coupling_bootstrap(pairs, records, method="linearised", **kwargs)
    }
    assert exact.keys() == linear.keys()
    n_checked = 0
    for key, row in exact.items():
        if key[2] not in ("edge_vs_disc", "nonanc_vs_disc"):
            continue
        width = row["ci_hi"] - row["ci_lo"]
        assert width > 0
        assert linear[key]["estimate"] == pytest.approx(row["estimate"], abs=1e-12)
        assert abs(linear[key]["ci_lo"] - row["ci_lo"]) <= 0.25 * width, key
        assert abs(linear[key]["ci_hi"] - row["ci_hi"]) <= 0.25 * width, key
        n_checked += 1
    assert n_checked >= 8


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_auto_coupling_bootstrap_is_exact_within_the_budget_and_linearised_beyond():
    """`auto` prices a language at models x (prompt, context, stratum) cells x draws."""
    pairs, records = random_coupling_world(4, (("en", 12), ("zh", 7)))
    draws, seed = 30, 3
    cells = {
        language: len(
            {
                (r["prompt_id"], r["context"], r["stratum_key"])
                for r in pairs.to_pylist()
                if r["language"] == language
            }
        )
        for language in ("en", "zh")
    }
    assert cells["en"] > cells["zh"]
    work = {language: 2 * n * draws for language, n in cells.items()}  # 2 models

    def by_key(method, **kwargs):
        rows = coupling_bootstrap(pairs, records, draws=draws, seed=seed, method=method, **kwargs)
        return {(r["language"], r["model_id"], r["effect"]): r for r in rows}

    exact, linear = by_key("exact"), by_key("linearised")
    assert {r["method"] for r in exact.values()} == {"exact"}
    assert {r["method"] for r in linear.values()} == {"linearised"}
    # zh fits exactly at its work, en is one evaluation over budget; both fit one above en's.
    for budget, expected in (
        (work["zh"], {"en": linear, "zh": exact}),
        (work["zh"] - 1, {"en": linear, "zh": linear}),
        (work["en"], {"en": exact, "zh": exact}),
    ):
        got = by_key("auto", exact_budget=budget)
        assert got.keys() == exact.keys()
        for key, row in got.items():
            assert row == expected[key[0]][key], (budget, key)


def test_coupling_inputs_take_readers_and_read_the_records_first():
    """The dbt models hand over readers (a zero-argument function returning the table): the
    arrays are those the tables give, and the records are read before the pairs, so only one
    table is held at a time."""
    pairs, records = random_coupling_world(3)
    read = []

    def reader(name, table):
        def read_table():
            read.append(name)
            return table

        return read_table

    from_tables = coupling_inputs(pairs, records)
    from_readers = coupling_inputs(reader("pairs", pairs), reader("records", records))

    assert read == ["records", "pairs"]
    np.testing.assert_array_equal(from_readers.outcomes, from_tables.outcomes)
    np.testing.assert_array_equal(from_readers.model_ids, from_tables.model_ids)
    for got, want in zip(from_readers.endpoints, from_tables.endpoints, strict=True):
        np.testing.assert_array_equal(got, want)
    assert from_readers.codes.keys() == from_tables.codes.keys()
    for key, want in from_tables.codes.items():
        got = from_readers.codes[key]
        for got_part, want_part in zip(
            got if isinstance(got, tuple) else (got,),
            want if isinstance(want, tuple) else (want,),
            strict=True,
        ):
            np.testing.assert_array_equal(got_part, want_part)
