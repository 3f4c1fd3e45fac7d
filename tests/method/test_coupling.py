"""The coupling bootstrap of `method.structure` on small random worlds: the exact method against
a from-scratch recomputation on every resampled world, the influence function against numerical
derivatives in the prompt weights, the linearised method against the exact one, the `auto`
budget, and the inputs read from readers.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from method.bootstrap import rng_for
from method.structure import (
    EFFECTS,
    MACRO_MODEL,
    coupling_bootstrap,
    coupling_cells,
    coupling_influence,
    coupling_inputs,
    coupling_intervals_from_draws,
    coupling_model_draws,
    coupling_prompt_effects,
    reusable_model_draws,
)
from tests.helpers import exact_bits


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


def _pairs_by_prompt(pair_rows):
    pairs_of = {}
    for r in pair_rows:
        pairs_of.setdefault(r["prompt_id"], []).append(r)
    return pairs_of


def _judged_pairs(pairs_of, outcome, origin):
    """(context, stratum, y1, y2) of each pair of `origin` whose two questions were judged."""
    for r in pairs_of[origin]:
        y1 = outcome.get((origin, r["question_id_1"]))
        y2 = outcome.get((origin, r["question_id_2"]))
        if y1 is not None and y2 is not None:
            yield r["context"], r["stratum_key"], y1, y2


def brute_force_statistics(pair_rows, outcome, copies):
    """Delta/Gamma of the resampled world built by duplicating prompts, in plain Python.

    `copies`: list of origin prompt ids, one entry per copy (a prompt drawn twice appears twice).
    A copy's marginals pool the pairs of every copy of a DIFFERENT origin prompt. Returns
    {effect: statistic or None} = mean over the copies that have the effect."""
    pairs_of = _pairs_by_prompt(pair_rows)

    def judged(origin):
        return _judged_pairs(pairs_of, outcome, origin)

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
    pairs_of = _pairs_by_prompt(pair_rows)

    def judged(origin):
        return _judged_pairs(pairs_of, outcome, origin)

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


def _model_rows(table: pa.Table, model: str) -> pa.Table:
    return table.filter(pc.equal(table["model_id"], model))


def _bits(table: pa.Table) -> list:
    return exact_bits(table.to_pylist())


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
@pytest.mark.parametrize("method", ["exact", "linearised", "auto"])
def test_a_models_draws_are_the_same_whichever_models_are_drawn_with_it(method):
    """Guards int_coupling_draws' incremental build (issue 33): a generator's rows drawn alone,
    with the warehouse's model count, are its rows of a call with every model, to the bit, so
    an append that draws only the newcomer stores what a full build would. Under `auto`, with a
    budget one model fits and three do not, the count decides the method, not the records."""
    models = ("m1", "m2", "m3")
    pairs, records = random_coupling_world(11, models=models)
    draws = 40
    cells = len({(r["prompt_id"], r["context"], r["stratum_key"]) for r in pairs.to_pylist()})
    settings = {"draws": draws, "seed": 5, "method": method, "exact_budget": cells * draws}
    whole = coupling_model_draws(pairs, records, **settings)
    assert set(whole["model_id"].to_pylist()) == set(models)
    if method == "auto":
        assert set(whole["bootstrap_method"].to_pylist()) == {"linearised"}
    for model in models:
        alone = coupling_model_draws(pairs, _model_rows(records, model), n_models=3, **settings)
        assert alone.num_rows > 0
        assert _bits(alone) == _bits(_model_rows(whole, model)), model


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_intervals_from_stored_draws_are_the_bootstraps_whatever_the_row_order():
    """Guards int_coupling_intervals over int_coupling_draws: rows in any order (an incremental
    build stores a rebuilt generator's rows last) give the intervals of `coupling_bootstrap`,
    and the macro mean counts the prompts where any model has the effect, which the per-prompt
    terms of `coupling_prompt_effects` count independently."""
    pairs, records = random_coupling_world(12, models=("m1", "m2", "m3"))
    model_draws = coupling_model_draws(pairs, records, draws=30, seed=2, method="linearised")
    order = np.random.default_rng(0).permutation(model_draws.num_rows)
    shuffled = coupling_intervals_from_draws(model_draws.take(order))
    assert _bits(shuffled) == _bits(coupling_intervals_from_draws(model_draws))
    want = coupling_bootstrap(pairs, records, draws=30, seed=2, method="linearised")
    assert shuffled.column("ci_lo").to_pylist() == [r["ci_lo"] for r in want]

    prompts_with = {}
    for row in coupling_prompt_effects(pairs, records).to_pylist():
        prompts_with.setdefault((row["language"], row["effect"]), set()).add(row["prompt_id"])
    macro = {
        (r["language"], r["effect"]): r["n_prompts"]
        for r in shuffled.to_pylist()
        if r["model_id"] == MACRO_MODEL
    }
    assert macro == {key: len(prompts) for key, prompts in prompts_with.items()}


@pytest.mark.filterwarnings("ignore:Mean of empty slice")
def test_stored_draws_are_reused_only_while_the_method_and_the_prompts_stand():
    """Guards `reusable_model_draws`: `auto` prices a language at models x cells x draws, so with
    a budget that fits three models exactly and not four, the draws stored for three are kept
    for three and drawn again for four (every model's method changes); rows drawn over another
    number of prompts are never kept."""
    pairs, records = random_coupling_world(13, (("en", 8),), models=("m1", "m2", "m3"))
    cells = len({(r["prompt_id"], r["context"], r["stratum_key"]) for r in pairs.to_pylist()})
    draws = 20
    budget = 3 * cells * draws
    stored = coupling_model_draws(pairs, records, draws=draws, seed=1, exact_budget=budget)
    assert set(stored["bootstrap_method"].to_pylist()) == {"exact"}

    def reusable(table, n_models):
        return reusable_model_draws(
            table, pairs, n_models=n_models, draws=draws, exact_budget=budget
        )

    assert reusable(stored, 3)
    assert not reusable(stored, 4)
    assert reusable(stored.slice(0, 0), 4)  # nothing stored, nothing to redraw
    other_prompts = stored.set_column(
        stored.schema.get_field_index("language_prompts"),
        "language_prompts",
        pa.array([9] * stored.num_rows, pa.int64()),
    )
    assert not reusable(other_prompts, 3)
