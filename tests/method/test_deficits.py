"""method.deficits on arrays small enough to work by hand: the field is the other generators."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from method.bootstrap import concept_weights
from method.deficits import (
    CAPABILITY_DEFICITS_SCHEMA,
    capability_deficits,
    deficits,
    field_means,
)
from method.scores import POINTS

NAN = np.nan


def test_the_field_of_each_generator_is_the_others_mean():
    # [M=3, S=1, T=2]: capability 0 scored by all three, capability 1 by m0 and m2 only
    scores = np.array([[[0.2, 0.9]], [[0.5, NAN]], [[0.8, 0.3]]])
    mean, n = field_means(scores)
    np.testing.assert_allclose(mean[:, 0, 0], [(0.5 + 0.8) / 2, (0.2 + 0.8) / 2, (0.2 + 0.5) / 2])
    np.testing.assert_allclose(mean[:, 0, 1], [0.3, (0.9 + 0.3) / 2, 0.9])
    np.testing.assert_array_equal(n[:, 0, :], [[2, 1], [2, 2], [2, 1]])
    gaps = deficits(scores)
    np.testing.assert_allclose(gaps[:, 0, 0], [0.2 - 0.65, 0.5 - 0.5, 0.8 - 0.35])
    assert np.isnan(gaps[1, 0, 1])  # no score of its own: no deficit, though it has a field
    np.testing.assert_allclose(gaps[[0, 2], 0, 1], [0.9 - 0.3, 0.3 - 0.9])


def test_a_generator_alone_has_no_field():
    scores = np.array([[[0.4]], [[NAN]]])
    mean, n = field_means(scores)
    assert np.isnan(mean[0, 0, 0]) and n[0, 0, 0] == 0
    assert np.isnan(deficits(scores)).all()


def test_replicates_keep_their_draws_apart():
    # [draws=2, M=2, S=1, T=1]: each draw's field comes from that draw only
    scores = np.array([[[[0.1]], [[0.7]]], [[[0.6]], [[0.2]]]])
    np.testing.assert_allclose(deficits(scores)[..., 0, 0], [[-0.6, 0.6], [0.4, -0.4]])


# -- capability_deficits end to end, on a world small enough to work by hand ------------------
# concept, model, language, capability, score_num, score_den (Eq. 2: valid yes / valid questions)
HAND_STATS = [
    ("c1", "m1", "en", "color", 1, 2),
    ("c2", "m1", "en", "color", 2, 2),
    ("c1", "m2", "en", "color", 0, 2),
    ("c1", "m1", "zh", "color", 1, 1),
    ("c1", "m2", "zh", "color", 1, 1),
    ("c2", "m1", "en", "shape", 1, 1),  # only m1 is scored on shape: no field
    # text from transcriptions (Eq. 3: L - D over L); 1 of 3 characters right
    ("c1", "m1", "en", "text", 1, 3),
    ("c1", "m2", "en", "text", 3, 3),
]
DRAWS, SEED = 60, 7


def _hand_deficits(stats_rows=HAND_STATS) -> dict[tuple, dict]:
    columns = ("concept_id", "model_id", "language", "capability", "score_num", "score_den")
    stats = pa.Table.from_pylist([dict(zip(columns, row, strict=True)) for row in stats_rows])
    taxonomy = pa.Table.from_pylist(
        [
            {"capability": c, "group_key": g, "group_order": i, "capability_order": i}
            for i, (c, g) in enumerate(
                [("color", "attribute"), ("shape", "attribute"), ("text", "text")]
            )
        ]
    )
    sources = pa.Table.from_pylist(
        [{"capability": c, "score_source": "judgment"} for c in ("color", "shape")]
        + [{"capability": "text", "score_source": "transcription"}]
    )
    table = capability_deficits(stats, taxonomy, sources, draws=DRAWS, seed=SEED)
    assert table.schema == CAPABILITY_DEFICITS_SCHEMA  # the mart's contract, null columns too
    return {(r["model_id"], r["language_scope"], r["capability"]): r for r in table.to_pylist()}


def test_capability_deficits_by_hand():
    """Scores, field means and deficits in points, worked by hand from HAND_STATS: en color m1
    3/4, m2 0/2; zh color both 1/1; pooled m1 4/5, m2 1/3; shape m1 alone (no field, no deficit,
    no draws); text from transcriptions: m1 1 - 2/3 (Eq. 3 as METHOD 3 writes it, which differs
    from 1/3 in the last bit: the leaderboard's rounding), m2 1. Guards the assembly of the rows
    (a score column holding the field, a field counted with the generator itself, a missing
    scope or an undefined field reported as 0, Eq. 2's rounding for text)."""
    rows = _hand_deficits()
    assert len(rows) == 12  # m1: 3 color, 2 shape, 2 text scopes; m2: 3 color, 2 text
    assert rows["m1", "en", "text"]["score"] == POINTS * (1 - 2 / 3) != POINTS * (1 / 3)
    expected = {  # (model, scope, capability): (score, field_mean, n_field, deficit)
        ("m1", "en", "color"): (75.0, 0.0, 1, 75.0),
        ("m2", "en", "color"): (0.0, 75.0, 1, -75.0),
        ("m1", "zh", "color"): (100.0, 100.0, 1, 0.0),
        ("m2", "zh", "color"): (100.0, 100.0, 1, 0.0),
        ("m1", "pooled", "color"): (80.0, 100 / 3, 1, 80.0 - 100 / 3),
        ("m2", "pooled", "color"): (100 / 3, 80.0, 1, 100 / 3 - 80.0),
        ("m1", "en", "shape"): (100.0, None, 0, None),
        ("m1", "pooled", "shape"): (100.0, None, 0, None),
        ("m1", "pooled", "text"): (100 / 3, 100.0, 1, 100 / 3 - 100.0),
        ("m2", "en", "text"): (100.0, 100 / 3, 1, 100.0 - 100 / 3),
    }
    for key, (score, field, n_field, deficit) in expected.items():
        row = rows[key]
        assert row["score"] == pytest.approx(score), key
        assert row["n_field_models"] == n_field, key
        if field is None:
            assert row["field_mean"] is row["deficit"] is None, key
            assert row["deficit_ci_lo"] is row["deficit_ci_hi"] is None, key
            assert row["n_draws"] == 0, key
        else:
            assert (row["field_mean"], row["deficit"]) == pytest.approx((field, deficit)), key


def test_capability_deficit_intervals_and_draw_counts_from_the_weights():
    """The interval and n_draws recomputed in plain Python from the bootstrap's weights (concepts
    c1, c2 in id order): m2's color score needs c1, so every color deficit is defined exactly in
    the draws that hold c1; with weights (w1, w2) m1's en deficit is (w1 + 2 w2) / (2 w1 + 2 w2)
    - 0 and its pooled one (w1 + 2 w2 + w1) / (2 w1 + 2 w2 + w1) - w1 / 3 w1. Planted bug it
    catches (issue 36): n_draws counting every draw instead of the draws where the deficit is
    defined; also interval ends swapped, or taken over every draw."""
    weights = np.concatenate(list(concept_weights(2, DRAWS, SEED)))
    with_c1 = weights[:, 0] > 0
    assert 0 < with_c1.sum() < DRAWS  # a count of every draw would differ
    w1, w2 = weights[with_c1, 0], weights[with_c1, 1]
    en = (w1 + 2 * w2) / (2 * w1 + 2 * w2)
    pooled = (2 * w1 + 2 * w2) / (3 * w1 + 2 * w2) - 1 / 3
    rows = _hand_deficits()
    for key, draws in (
        (("m1", "en", "color"), en),
        (("m2", "en", "color"), -en),
        (("m1", "pooled", "color"), pooled),
        (("m2", "pooled", "color"), -pooled),
        (("m1", "zh", "color"), 0 * en),
    ):
        row = rows[key]
        assert row["n_draws"] == with_c1.sum(), key
        lo, hi = np.percentile(100 * draws, [2.5, 97.5])
        assert (row["deficit_ci_lo"], row["deficit_ci_hi"]) == pytest.approx((lo, hi)), key


def test_a_lone_generator_keeps_the_marts_column_types():
    """With one generator no row has a field, so every field column is null: the table must
    still carry the contract's types (float64), not the null type Arrow infers from Nones."""
    rows = _hand_deficits([row for row in HAND_STATS if row[1] == "m1"])
    assert {row["n_field_models"] for row in rows.values()} == {0}
