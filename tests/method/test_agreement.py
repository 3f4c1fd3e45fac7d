"""Judge agreement estimators (method/agreement.py, METHOD 14-15) on hand-computed tables: kappa
and raw agreement worked by hand, Spearman and Kendall against scipy.stats (an independent
route, ties included), the weighted (bootstrap) forms against explicitly copied samples, and the
minimum-shared-items rule."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import kendalltau, spearmanr

from method.agreement import (
    HUMAN_AGREEMENT_SCHEMA,
    JUDGE_AGREEMENT_SCHEMA,
    cohen_kappa,
    concept_draws,
    human_agreement,
    judge_agreement,
    kappa_from_table,
    ranking_agreement,
    weighted_kendall,
    weighted_spearman,
)
from method.bootstrap import DRAW_CHUNK, resampling_counts, rng_for


def reference_kappa(a: list[int], b: list[int]) -> float:
    """Cohen's kappa from its definition, item by item (no 2x2 table)."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    yes_a, yes_b = sum(a) / n, sum(b) / n
    expected = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
    return (observed - expected) / (1 - expected)


# -- kappa and raw agreement, by hand ----------------------------------------------------------


def test_kappa_on_a_hand_table():
    # 20 both yes, 5 a only, 10 b only, 15 both no: p_o = 35/50 = 0.7; yes-rates 0.5 and 0.6,
    # p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    agreement, kappa = kappa_from_table(20, 5, 10, 15)
    assert agreement == pytest.approx(0.7)
    assert kappa == pytest.approx(0.4)
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert reference_kappa(a, b) == pytest.approx(0.4)


def test_kappa_extremes_by_hand():
    assert cohen_kappa([1, 0, 1, 0], [1, 0, 1, 0]) == pytest.approx(1.0)  # p_o = 1, p_e = 0.5
    assert cohen_kappa([1, 0], [0, 1]) == pytest.approx(-1.0)  # p_o = 0, p_e = 0.5
    # p_o = 0.75 equals p_e = 0.75 (a says yes always, b 3 of 4): no agreement beyond chance
    assert cohen_kappa([1, 1, 1, 1], [1, 1, 1, 0]) == pytest.approx(0.0)
    # one answer from both judges: p_e = 1, kappa undefined, not 1 and not 0
    assert np.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    agreement, kappa = kappa_from_table(0, 0, 0, 0)
    assert np.isnan(agreement) and np.isnan(kappa)


def _pair_rows(rows: list[tuple]) -> pa.Table:
    names = ("concept_id", "capability", "both_yes", "a_only", "b_only", "both_no")
    records = [dict(zip(names, r, strict=True)) | {"judge_a": "ja", "judge_b": "jb"} for r in rows]
    return pa.Table.from_pylist(records)


def test_judge_agreement_rows_overall_per_capability_and_the_minimum_rule():
    tables = _pair_rows(
        [
            # color over two concepts: 2 both yes, 1 a only, 1 b only
            ("c1", "color", 1, 1, 0, 0),
            ("c2", "color", 1, 0, 1, 0),
            # spatial: 3 items, below the minimum of 4
            ("c1", "spatial", 1, 0, 0, 2),
            # style: 4 items, all "yes" from both: kappa undefined
            ("c2", "style", 4, 0, 0, 0),
        ]
    )
    rows = {
        r["capability"]: r
        for r in judge_agreement(tables, draws=50, seed=1, min_shared=4).to_pylist()
    }
    assert set(rows) == {"__all__", "color", "spatial", "style"}
    # color: p_o = 2/4; yes-rates 3/4 and 3/4, p_e = 9/16 + 1/16 = 10/16; kappa = -1/3
    assert rows["color"]["n_shared"] == 4
    assert rows["color"]["agreement_frac"] == pytest.approx(0.5)
    assert rows["color"]["kappa"] == pytest.approx(-1 / 3)
    assert rows["color"]["reason"] is None and rows["color"]["n_concepts"] == 2
    # the minimum-shared-items rule: NULL kappa and interval with a reason; agreement stays
    assert rows["spatial"]["kappa"] is None and rows["spatial"]["kappa_ci_lo"] is None
    assert "fewer shared items (3)" in rows["spatial"]["reason"]
    assert rows["spatial"]["agreement_frac"] == pytest.approx(1.0)
    assert rows["style"]["kappa"] is None and "same single answer" in rows["style"]["reason"]
    # both_yes 1+1+1+4 = 7, a_only 1, b_only 1, both_no 2; n = 11
    # p_o = 9/11; yes-rates 8/11 and 8/11; p_e = (64 + 9) / 121 = 73/121
    # kappa = (99/121 - 73/121) / (48/121) = 26/48
    overall = rows["__all__"]
    assert overall["n_shared"] == 11
    assert overall["agreement_frac"] == pytest.approx(9 / 11)
    assert overall["kappa"] == pytest.approx(26 / 48)
    assert overall["yes_rate_a"] == pytest.approx(8 / 11)
    assert overall["kappa_ci_lo"] <= overall["kappa_ci_hi"]


def test_one_concept_gives_a_degenerate_interval_at_the_point():
    """Every concept-bootstrap draw of a single concept is that concept: lo = point = hi."""
    tables = _pair_rows([("c1", "color", 20, 5, 10, 15)])
    row = judge_agreement(tables, draws=20, seed=3, min_shared=1).to_pylist()[0]
    assert row["kappa"] == pytest.approx(0.4)
    assert row["kappa_ci_lo"] == pytest.approx(0.4) and row["kappa_ci_hi"] == pytest.approx(0.4)
    assert row["n_draws"] == 20


def test_the_bootstrap_interval_equals_kappa_of_explicitly_copied_items():
    """The interval from weighted 2x2 tables equals the percentile interval of kappa computed
    item by item on samples in which each concept's items are copied w_c times."""
    tables = _pair_rows(
        [
            ("c1", "color", 3, 1, 0, 2),
            ("c2", "color", 1, 2, 1, 0),
            ("c3", "color", 0, 0, 2, 3),
            ("c4", "color", 4, 1, 1, 1),
        ]
    )
    draws, seed = 200, 11
    row = judge_agreement(tables, draws=draws, seed=seed, min_shared=1).to_pylist()[0]
    items = {}  # concept -> (a answers, b answers)
    for r in tables.to_pylist():
        a = [1] * r["both_yes"] + [1] * r["a_only"] + [0] * r["b_only"] + [0] * r["both_no"]
        b = [1] * r["both_yes"] + [0] * r["a_only"] + [1] * r["b_only"] + [0] * r["both_no"]
        items[r["concept_id"]] = (a, b)
    concepts = sorted(items)
    weights = resampling_counts(len(concepts), draws, rng_for(seed, "judge_agreement"))
    replicates = []
    for w in weights:
        a = [x for c, k in zip(concepts, w, strict=True) for x in items[c][0] * int(k)]
        b = [x for c, k in zip(concepts, w, strict=True) for x in items[c][1] * int(k)]
        p_a, p_b = sum(a) / len(a), sum(b) / len(b)
        if p_a * p_b + (1 - p_a) * (1 - p_b) < 1:
            replicates.append(reference_kappa(a, b))
    lo, hi = np.percentile(replicates, [2.5, 97.5])
    assert row["kappa_ci_lo"] == pytest.approx(lo) and row["kappa_ci_hi"] == pytest.approx(hi)
    assert row["n_draws"] == len(replicates)


def test_no_pair_and_no_ratings_give_empty_typed_tables():
    empty = pa.table(
        {
            name: pa.array([], pa.string() if name in ("judge_a", "judge_b") else pa.int64())
            for name in ("judge_a", "judge_b", "both_yes", "a_only", "b_only", "both_no")
        }
        | {"concept_id": pa.array([], pa.string()), "capability": pa.array([], pa.string())}
    )
    out = judge_agreement(empty, draws=10, seed=1, min_shared=50)
    assert out.num_rows == 0 and out.schema == JUDGE_AGREEMENT_SCHEMA
    no_ratings = pa.table(
        {name: pa.array([], pa.string()) for name in ("judge_id", "model_id", "concept_id")}
        | {name: pa.array([], pa.float64()) for name in ("judge_score", "human_score")}
    )
    out = human_agreement(no_ratings, draws=10, seed=1)
    assert out.num_rows == 0 and out.schema == HUMAN_AGREEMENT_SCHEMA


# -- Spearman and Kendall with ties ------------------------------------------------------------

X = [0.0, 1 / 3, 1 / 3, 2 / 3, 1.0, 1.0, 0.5, 0.0]
Y = [1.5, 4.5, 2.5, 3.0, 5.0, 4.5, 4.5, 2.0]


def test_correlations_by_hand_without_ties():
    # x = 1..4, y = 1,3,2,4: d = 0,1,1,0, rho = 1 - 6 * 2 / (4 * 15) = 0.8;
    # 6 pairs, one discordant (2,3): tau = (5 - 1) / 6
    ones = np.ones((1, 4))
    assert weighted_spearman([1, 2, 3, 4], [1, 3, 2, 4], ones)[0] == pytest.approx(0.8)
    assert weighted_kendall([1, 2, 3, 4], [1, 3, 2, 4], ones)[0] == pytest.approx(4 / 6)


def test_correlations_with_ties_equal_scipy():
    ones = np.ones((1, len(X)))
    assert weighted_spearman(X, Y, ones)[0] == pytest.approx(spearmanr(X, Y).statistic)
    assert weighted_kendall(X, Y, ones)[0] == pytest.approx(kendalltau(X, Y).statistic)  # tau-b


def test_weighted_correlations_equal_scipy_on_copied_samples():
    rng = np.random.default_rng(5)
    weights = rng.integers(0, 4, size=(30, len(X))).astype(float)
    weights[:, 0] += 1  # never an empty sample
    spearman = weighted_spearman(X, Y, weights)
    kendall = weighted_kendall(X, Y, weights)
    for d, w in enumerate(weights):
        x, y = np.repeat(X, w.astype(int)), np.repeat(Y, w.astype(int))
        if len(set(x)) < 2 or len(set(y)) < 2:
            assert np.isnan(spearman[d]) and np.isnan(kendall[d])
            continue
        assert spearman[d] == pytest.approx(spearmanr(x, y).statistic), d
        assert kendall[d] == pytest.approx(kendalltau(x, y).statistic), d


def test_constant_scores_have_no_correlation():
    ones = np.ones((1, 4))
    assert np.isnan(weighted_spearman([1, 1, 1, 1], [1, 2, 3, 4], ones)[0])
    assert np.isnan(weighted_kendall([1, 2, 3, 4], [2, 2, 2, 2], ones)[0])


def test_ranking_agreement_by_hand():
    # means: judge m1 0.5, m2 0.25, m3 0.9; humans m1 3, m2 4, m3 5 -> ranks (2,3,1) vs (3,2,1)
    # d = (1, 1, 0): rho = 1 - 6 * 2 / (3 * 8) = 0.5; the rankings differ
    models = ["m1", "m1", "m2", "m3"]
    judge = np.array([0.25, 0.75, 0.25, 0.9])
    human = np.array([2.0, 4.0, 4.0, 5.0])
    rho, matches, n_models = ranking_agreement(models, judge, human)
    assert rho == pytest.approx(0.5) and matches is False and n_models == 3
    rho, matches, _ = ranking_agreement(models, judge, np.array([4.0, 4.0, 2.0, 5.0]))
    assert rho == pytest.approx(1.0) and matches is True


def test_human_agreement_rows():
    images = pa.Table.from_pylist(
        [
            {
                "judge_id": "j",
                "model_id": m,
                "concept_id": f"c{i}",
                "judge_score": x,
                "human_score": y,
            }
            for i, (m, x, y) in enumerate(zip(["m1", "m2"] * 4, X, Y, strict=True))
        ]
        + [
            {
                "judge_id": "k",
                "model_id": "m1",
                "concept_id": "c0",
                "judge_score": 0.5,
                "human_score": 3.0,
            }
        ]
    )
    rows = {r["judge_id"]: r for r in human_agreement(images, draws=100, seed=2).to_pylist()}
    assert rows["j"]["n_images"] == 8 and rows["j"]["n_concepts"] == 8
    assert rows["j"]["spearman"] == pytest.approx(spearmanr(X, Y).statistic)
    assert rows["j"]["kendall"] == pytest.approx(kendalltau(X, Y).statistic)
    assert rows["j"]["spearman_ci_lo"] <= rows["j"]["spearman"] <= rows["j"]["spearman_ci_hi"]
    assert 0 < rows["j"]["n_draws"] <= 100
    assert rows["k"]["spearman"] is None and "fewer than 3 images" in rows["k"]["reason"]


# -- holes found by `make mutation` (issue 36) -------------------------------------------------


def test_every_column_of_the_pair_rows_by_hand():
    """Kills mutants of judge_agreement and _concept_tables: the judge names, yes_rate_a/b read
    from the wrong cells, the agreement interval's keys, n_concepts counting empty concepts or
    only those with 2+ items, a row with one shared item dropped, `break` for `continue` at a
    pair without a capability (later pairs lost), two rows of one concept overwritten instead of
    summed, and the interval / n_draws of an undefined kappa not NULL / 0."""
    records = [
        # (ja, jb): color in c1 twice (two languages, summed): 2 both yes, 1 a only, 1 both no
        ("ja", "jb", "c1", "color", 1, 1, 0, 0),
        ("ja", "jb", "c1", "color", 1, 0, 0, 1),
        ("ja", "jb", "c2", "spatial", 0, 0, 1, 0),  # one item: b only
        # (ja, jc): style only, every answer yes: kappa undefined
        ("ja", "jc", "c2", "style", 3, 0, 0, 0),
    ]
    names = ("judge_a", "judge_b", "concept_id", "capability", "both_yes", "a_only")
    names += ("b_only", "both_no")
    tables = pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in records])
    out = judge_agreement(tables, draws=5, seed=1, min_shared=1).to_pylist()
    rows = {(r["judge_a"], r["judge_b"], r["capability"]): r for r in out}
    assert set(rows) == {
        ("ja", "jb", "__all__"),
        ("ja", "jb", "color"),
        ("ja", "jb", "spatial"),
        ("ja", "jc", "__all__"),
        ("ja", "jc", "style"),
    }
    color = rows["ja", "jb", "color"]
    # 2 both yes, 1 a only, 0 b only, 1 both no: yes-rates 3/4 and 2/4, p_o = 3/4
    assert color["n_shared"] == 4 and color["n_concepts"] == 1
    assert color["yes_rate_a"] == pytest.approx(0.75)
    assert color["yes_rate_b"] == pytest.approx(0.5)
    assert color["agreement_frac"] == pytest.approx(0.75)
    # one concept: every draw is that concept, so the interval is the point
    assert color["agreement_ci_lo"] == pytest.approx(0.75)
    assert color["agreement_ci_hi"] == pytest.approx(0.75)
    spatial = rows["ja", "jb", "spatial"]
    assert spatial["n_shared"] == 1 and spatial["n_concepts"] == 1
    assert spatial["yes_rate_a"] == 0 and spatial["yes_rate_b"] == 1
    # __all__ of (ja, jb): 2 both yes, 1 a only, 1 b only, 1 both no over two concepts
    overall = rows["ja", "jb", "__all__"]
    assert overall["n_concepts"] == 2 and overall["n_shared"] == 5
    assert overall["yes_rate_a"] == pytest.approx(3 / 5)
    assert overall["yes_rate_b"] == pytest.approx(3 / 5)
    style = rows["ja", "jc", "style"]
    assert style["n_concepts"] == 1 and style["agreement_frac"] == 1
    assert style["kappa"] is None and style["kappa_ci_lo"] is None
    assert style["kappa_ci_hi"] is None and style["n_draws"] == 0
    assert style["reason"] == (
        "kappa undefined: both judges gave the same single answer to every shared item"
    )


def test_pair_rows_keep_their_schema_and_no_draws_give_no_interval():
    """Kills the schema dropped from judge_agreement's table (a column of only NULLs would be
    typed null), an empty replicate stack started with one row, `_intervals` taking one draw
    for none (or filling with None) and `_finite` passing NaN on as a number."""
    tables = _pair_rows([("c1", "color", 2, 1, 1, 2)])
    out = judge_agreement(tables, draws=0, seed=1, min_shared=1)
    assert out.schema == JUDGE_AGREEMENT_SCHEMA
    row = out.to_pylist()[0]
    assert row["agreement_frac"] == pytest.approx(4 / 6)
    for bound in ("agreement_ci_lo", "agreement_ci_hi", "kappa_ci_lo", "kappa_ci_hi"):
        assert row[bound] is None, bound
    # a single draw of the single concept is the point itself
    one = judge_agreement(tables, draws=1, seed=1, min_shared=1).to_pylist()[0]
    assert one["agreement_ci_lo"] == pytest.approx(4 / 6)
    assert one["agreement_ci_hi"] == pytest.approx(4 / 6)


def test_the_agreement_draws_come_from_their_own_keyed_stream():
    """Kills the stream key of judge_agreement's draws changed: with five draws over three
    concepts the interval of raw agreement, recomputed by hand from rng_for(seed,
    "judge_agreement"), differs from another stream's."""
    per_concept = {"c1": (3, 0, 0, 1), "c2": (0, 2, 2, 0), "c3": (1, 1, 0, 2)}
    tables = _pair_rows([(c, "color", *cells) for c, cells in per_concept.items()])
    row = judge_agreement(tables, draws=5, seed=4, min_shared=1).to_pylist()[0]
    weights = resampling_counts(3, 5, rng_for(4, "judge_agreement"))
    agree = np.array([cells[0] + cells[3] for cells in per_concept.values()], dtype=float)
    total = np.array([sum(cells) for cells in per_concept.values()], dtype=float)
    replicates = (weights @ agree) / (weights @ total)
    lo, hi = np.percentile(replicates, [2.5, 97.5])
    assert row["agreement_ci_lo"] == pytest.approx(lo)
    assert row["agreement_ci_hi"] == pytest.approx(hi)


def test_concept_draws_chunks_add_up_to_the_draws_asked():
    """Kills `draws + start` for `draws - start`: the last chunk after a full DRAW_CHUNK would
    hold DRAW_CHUNK draws instead of the rest."""
    chunks = list(concept_draws(2, DRAW_CHUNK + 1, 1, "k"))
    assert [len(c) for c in chunks] == [DRAW_CHUNK, 1]


def test_cohen_kappa_of_float_answers():
    """Kills the bool conversion of either answer vector dropped: 0.0/1.0 answers (a numeric
    column) would then fail at `&`. a = 1,1,0,0 and b = 1,0,0,0: p_o = 3/4, yes-rates 1/2 and
    1/4, p_e = 1/8 + 3/8 = 1/2, kappa = (3/4 - 1/2) / (1/2) = 1/2."""
    assert cohen_kappa([1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.5)


def test_two_points_have_a_correlation():
    """Kills `var > 1` for `var > 0` in weighted_spearman: two points' average ranks 1 and 2
    have a weighted sum of squares of 1/2, and their rho is -1 or +1."""
    ones = np.ones((1, 2))
    assert weighted_spearman([1, 2], [3, 5], ones)[0] == pytest.approx(1.0)
    assert weighted_spearman([1, 2], [5, 3], ones)[0] == pytest.approx(-1.0)


def test_two_generators_have_a_ranking_correlation():
    """Kills `len(models) <= MIN_MODELS`: with two generators the ranking rho is +1 (same
    order) or -1, and the match is known."""
    rho, matches, n_models = ranking_agreement(["m1", "m2"], [0.2, 0.8], [1.0, 4.0])
    assert rho == pytest.approx(1.0) and matches is True and n_models == 2
    rho, matches, _ = ranking_agreement(["m1", "m2"], [0.8, 0.2], [1.0, 4.0])
    assert rho == pytest.approx(-1.0) and matches is False


def _image_rows(judge_id: str, triples) -> list[dict]:
    return [
        {"judge_id": judge_id, "model_id": m, "concept_id": c, "judge_score": x, "human_score": y}
        for m, c, x, y in triples
    ]


def test_every_column_of_the_human_rows_by_hand():
    """Kills mutants of _judge_human_agreement and human_agreement: the ranking columns'
    keys, the judge or human scores not handed to ranking_agreement, n_draws starting at 1,
    `<=` for `<` at exactly MIN_IMAGES images, `&` for `|` on the constant-score row, its
    reason's key and text, the Kendall interval's keys, and the schema dropped (a column of
    only NULLs would be typed null)."""
    # j: 3 images, m1 (c1, c2) and m2 (c3). Judge 0.2, 0.4, 0.9; human 1, 2, 3.
    # Means: judge m1 0.3, m2 0.9; human m1 1.5, m2 3: the same order, rho +1, ranks match.
    images = _image_rows("j", [("m1", "c1", 0.2, 1.0), ("m1", "c2", 0.4, 2.0)])
    images += _image_rows("j", [("m2", "c3", 0.9, 3.0)])
    # k: 3 images with one judge score: no correlation
    images += _image_rows("k", [("m1", "c1", 0.5, 1.0), ("m1", "c2", 0.5, 2.0)])
    images += _image_rows("k", [("m2", "c3", 0.5, 3.0)])
    out = human_agreement(pa.Table.from_pylist(images), draws=0, seed=1)
    assert out.schema == HUMAN_AGREEMENT_SCHEMA
    rows = {r["judge_id"]: r for r in out.to_pylist()}
    j, k = rows["j"], rows["k"]
    assert j["n_images"] == 3 and j["n_models"] == 2 and j["reason"] is None
    assert j["spearman"] == pytest.approx(1.0) and j["kendall"] == pytest.approx(1.0)
    assert j["ranking_spearman"] == pytest.approx(1.0) and j["ranking_matches"] is True
    assert j["n_draws"] == 0 and j["spearman_ci_lo"] is None
    assert k["n_draws"] == 0 and k["spearman"] is None
    assert k["reason"] == "correlation undefined: the judge's or the human scores are constant"
    # judge means m1 0.5, m2 0.5 (constant): no ranking rho; both share rank 1, humans do not
    assert k["ranking_spearman"] is None and k["ranking_matches"] is False
    with_draws = {
        r["judge_id"]: r
        for r in human_agreement(pa.Table.from_pylist(images), draws=20, seed=1).to_pylist()
    }
    j = with_draws["j"]
    assert j["kendall_ci_lo"] is not None and j["kendall_ci_hi"] is not None
    assert j["kendall_ci_lo"] <= j["kendall"] <= j["kendall_ci_hi"]


def test_the_human_draws_come_from_their_own_keyed_stream():
    """Kills the stream key of human_agreement's draws dropped or changed: the Spearman
    interval recomputed from rng_for(seed, "human_agreement") over copied samples (scipy)."""
    scores = [(0.1, 1.0), (0.5, 3.0), (0.3, 4.0), (0.9, 2.0)]
    triples = [("m1", f"c{i}", x, y) for i, (x, y) in enumerate(scores)]
    row = human_agreement(pa.Table.from_pylist(_image_rows("j", triples)), draws=5, seed=7)
    row = row.to_pylist()[0]
    weights = resampling_counts(4, 5, rng_for(7, "human_agreement")).astype(int)
    replicates = []
    for w in weights:
        x = np.repeat([s[0] for s in scores], w)
        y = np.repeat([s[1] for s in scores], w)
        if len(set(x)) > 1 and len(set(y)) > 1:
            replicates.append(spearmanr(x, y).statistic)
    lo, hi = np.percentile(replicates, [2.5, 97.5])
    assert row["spearman_ci_lo"] == pytest.approx(lo)
    assert row["spearman_ci_hi"] == pytest.approx(hi)
    assert row["n_draws"] == len(replicates)


def test_below_the_minimum_a_defined_kappa_has_no_interval_and_no_draws():
    """Kills kappa_ci_hi and n_draws kept below judge_agreement_min_shared: kappa is defined
    here (3 both yes, 1 a only, 2 b only, 4 both no: p_o = 7/10, p_e = 4/10 * 5/10 + 6/10 *
    5/10 = 1/2, kappa 2/5), but the 10 shared items are under the minimum of 12."""
    tables = _pair_rows([("c1", "color", 2, 1, 1, 2), ("c2", "color", 1, 0, 1, 2)])
    row = judge_agreement(tables, draws=5, seed=1, min_shared=12).to_pylist()[0]
    assert row["kappa"] is None and row["kappa_ci_lo"] is None and row["kappa_ci_hi"] is None
    assert row["n_draws"] == 0 and "fewer shared items (10)" in row["reason"]
