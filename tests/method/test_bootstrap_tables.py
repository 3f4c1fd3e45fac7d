"""method/bootstrap.py's warehouse tables (METHOD 6, 11) on hand worlds: `masking_effect`,
`reliability_draws`, `rank_reliability` and `pairwise_reliability`, which the dbt marts alone
reached until `make mutation` showed every mutant of them uncovered by a unit test (issue 36).
Every expected value is worked out by hand in the comments."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from method.bootstrap import (
    concept_weights,
    masking_effect,
    pairwise_reliability,
    rank_reliability,
    reliability_draws,
)

# Taxonomy: g1 = {c1, t}, g2 = {c2}; `t` is scored from transcriptions (Eq. 3). Rows out of
# reporting order, so the taxonomy's order is what counts.
CAPABILITIES = pa.table(
    {
        "capability": ["c2", "t", "c1"],
        "group_key": ["g2", "g1", "g1"],
        "group_order": [2, 1, 1],
        "capability_order": [1, 2, 1],
    }
)
SCORE_SOURCES = pa.table(
    {
        "capability": ["c1", "t", "c2"],
        "score_source": ["judgment", "transcription", "judgment"],
    }
)


def stats_world(second: str = "zh") -> pa.Table:
    """int_prompt_sufficient_stats of three models, languages `en` and `second`, concepts k1, k2.

    Per model and language (masked score_num / score_den; unmasked n_yes / n_answered):
      en  a: c1 3/4 (k1 2/2 + k2 1/2), unmasked 1/4; t 8/10; c2 1/2, unmasked 1/2
          b: c1 1/2, unmasked 2/2; t 6/10; c2 1/2, unmasked 1/2
          c: c1 1/4, unmasked 1/4; t 4/10; c2 0/2, unmasked 0/2
      2nd a: c2 2/2, unmasked 2/4
          b: c2 1/2, unmasked 3/4
          c: c1 0/0 (no valid answer), unmasked 9/10
    The transcription rows carry n_yes = n_answered = 0: Eq. 3's evidence is not masked, so the
    unmasked view must keep 8/10, 6/10, 4/10. n_missing: a en 1 + 1, a 2nd 1, c en 1, c 2nd 3.
    """
    rows = [
        # concept, model, language, capability, num, den, n_yes, n_answered, n_missing
        ("k1", "a", "en", "c1", 2, 2, 1, 2, 1),
        ("k2", "a", "en", "c1", 1, 2, 0, 2, 1),
        ("k1", "a", "en", "t", 8, 10, 0, 0, 0),
        ("k1", "a", "en", "c2", 1, 2, 1, 2, 0),
        ("k1", "b", "en", "c1", 1, 2, 2, 2, 0),
        ("k1", "b", "en", "t", 6, 10, 0, 0, 0),
        ("k1", "b", "en", "c2", 1, 2, 1, 2, 0),
        ("k1", "c", "en", "c1", 1, 4, 1, 4, 0),
        ("k1", "c", "en", "t", 4, 10, 0, 0, 0),
        ("k1", "c", "en", "c2", 0, 2, 0, 2, 1),
        ("k1", "a", second, "c2", 2, 2, 2, 4, 1),
        ("k1", "b", second, "c2", 1, 2, 3, 4, 0),
        ("k1", "c", second, "c1", 0, 0, 9, 10, 3),
    ]
    names = (
        "concept_id",
        "model_id",
        "language",
        "capability",
        "score_num",
        "score_den",
        "n_yes",
        "n_answered",
        "n_missing",
    )
    return pa.table({name: [row[i] for row in rows] for i, name in enumerate(names)})


def assert_rows(got: pa.Table, want: list[tuple], names: tuple[str, ...]):
    """Row by row: None where `want` has None, floats to 1e-12, the rest exactly."""
    got_rows = got.to_pylist()
    assert len(got_rows) == len(want)
    for row, expected in zip(got_rows, want, strict=True):
        for name, value in zip(names, expected, strict=True):
            if isinstance(value, float):
                assert row[name] == pytest.approx(value, abs=1e-12), (name, row)
            else:
                assert row[name] == value, (name, row)
                assert type(row[name]) is type(value), (name, row)


# The masked and unmasked HCQ totals (fractions), by hand from the world above:
#   en  a: masked g1 (0.75 + 0.8) / 2 = 0.775, g2 0.5 -> 0.6375; unmasked g1 (0.25 + 0.8) / 2,
#          g2 0.5 -> 0.5125
#       b: masked g1 (0.5 + 0.6) / 2, g2 0.5 -> 0.525; unmasked g1 (1.0 + 0.6) / 2 -> 0.65
#       c: g1 (0.25 + 0.4) / 2, g2 0 -> 0.1625 both ways
#   2nd a: 1.0 / 0.5; b: 0.5 / 0.75; c: masked undefined (no valid answer), unmasked 0.9
#   bilingual = (en + 2nd) / 2: a 0.81875 / 0.50625; b 0.5125 / 0.7; c undefined / 0.53125
MASKING_NAMES = (
    "model_id",
    "language_scope",
    "hcq_masked",
    "hcq_unmasked",
    "rank_masked",
    "rank_unmasked",
    "rank_shift",
    "has_moved",
    "spearman_rho",
    "n_missing_judgments",
)


@pytest.mark.parametrize("second, bilingual", [("zh", None), ("fr", ("en", "fr"))])
def test_masking_effect_by_hand(second, bilingual):
    """Guards fct_masking_effect (METHOD 6) column by column: the masked and unmasked totals in
    points (Eq. 3's transcriptions unmasked in both), ranks among only the models with both
    totals (c's unmasked 0.9 in the second language must not push a and b down), the shift
    unmasked - masked and whether it moved, Spearman's rho only where more than two models have
    both (en: ranks (3, 2, 1) against (2, 3, 1), 1 - 6 * 2 / (3 * 8) = 0.5; none with two), the
    missing judgments summed over the scope's languages, and the bilingual languages handed
    through (a second language `fr` named as bilingual must give a bilingual scope)."""
    args = {} if bilingual is None else {"bilingual_languages": bilingual}
    got = masking_effect(stats_world(second), CAPABILITIES, SCORE_SOURCES, **args)
    want = [
        ("a", "en", 63.75, 51.25, 1, 2, 1, True, 0.5, 2),
        ("b", "en", 52.5, 65.0, 2, 1, -1, True, 0.5, 0),
        ("c", "en", 16.25, 16.25, 3, 3, 0, False, 0.5, 1),
        ("a", second, 100.0, 50.0, 1, 2, 1, True, None, 1),
        ("b", second, 50.0, 75.0, 2, 1, -1, True, None, 0),
        ("c", second, None, 90.0, None, None, None, None, None, 3),
        ("a", "bilingual", 81.875, 50.625, 1, 2, 1, True, None, 3),
        ("b", "bilingual", 51.25, 70.0, 2, 1, -1, True, None, 0),
        ("c", "bilingual", None, 53.125, None, None, None, None, None, 4),
    ]
    assert_rows(got, want, MASKING_NAMES)


def test_reliability_draws_are_the_observed_totals_then_each_resample():
    """Guards int_reliability_draws: draw 0 is the observed sample (every concept once), draw b
    the totals of the concepts draw b resampled, one row per draw x model x scope in that
    order, undefined totals null, draw_index int32. Two concepts, so a resample is (k1, k2)
    once each, k1 twice or k2 twice (masked totals, by hand from `stats_world`):
      observed: en a 0.6375, b 0.525, c 0.1625; zh a 1.0, b 0.5, c -; bilingual a 0.81875,
                b 0.5125, c -
      k1 twice: a's en c1 is 2 * 2/2 = 1.0, so en a (1.0 + 0.8) / 2 = 0.9 and 0.5 -> 0.7,
                bilingual a (0.7 + 1.0) / 2 = 0.85; the rest as observed (ratios of doubled sums)
      k2 twice: only a's en c1 has evidence (2 * 1/2 = 0.5): en a 0.5; everything else null
    Which resample each draw is comes from `concept_weights` (its own tests hold it)."""
    by_weights = {
        (1, 1): [0.6375, 1.0, 0.81875, 0.525, 0.5, 0.5125, 0.1625, None, None],
        (2, 0): [0.7, 1.0, 0.85, 0.525, 0.5, 0.5125, 0.1625, None, None],
        (0, 2): [0.5, None, None, None, None, None, None, None, None],
    }
    draws, seed = 12, 3
    weights = np.concatenate(list(concept_weights(2, draws, seed)))
    resamples = [(1, 1)] + [tuple(int(w) for w in row) for row in weights]
    assert {(2, 0), (0, 2), (1, 1)} <= set(resamples[1:])  # the seed shows all three
    got = reliability_draws(stats_world(), CAPABILITIES, SCORE_SOURCES, draws=draws, seed=seed)
    assert got.schema.field("draw_index").type == pa.int32()
    want = [
        (b, scope, model, total)
        for b, resample in enumerate(resamples)
        for (model, scope), total in zip(
            [(m, s) for m in "abc" for s in ("en", "zh", "bilingual")],
            by_weights[resample],
            strict=True,
        )
    ]
    assert_rows(got, want, ("draw_index", "language_scope", "model_id", "hcq_total_frac"))


def test_reliability_draws_hand_the_bilingual_languages_on():
    """Guards `bilingual_languages` handed to the statistics: with `en` and `fr` named, the
    observed bilingual total of a is (0.6375 + 1.0) / 2; left at the default (en, zh) there is
    no bilingual scope at all."""
    got = reliability_draws(
        stats_world("fr"),
        CAPABILITIES,
        SCORE_SOURCES,
        draws=1,
        seed=0,
        bilingual_languages=("en", "fr"),
    )
    rows = [r for r in got.to_pylist() if r["draw_index"] == 0 and r["model_id"] == "a"]
    assert [r["language_scope"] for r in rows] == ["en", "fr", "bilingual"]
    assert rows[2]["hcq_total_frac"] == pytest.approx(0.81875)


def draws_table() -> pa.Table:
    """int_reliability_draws by hand, rows shuffled, one cell absent and some totals null:
    en  draw 0 (observed): x 0.5, y 0.7, z null
        draw 1: x 0.6, y 0.4, z 0.5 | draw 2: x 0.3, y 0.8, z 0.2
        draw 3: x 0.5, y 0.5 (tie), z null | draw 4: x 0.9, y absent, z 0.1
    zh  draw 0: x 0.2, y 0.1 | draw 1: x 0.3, y 0.4 | draws 2-4 and z: absent
    """
    rows = [
        (3, "en", "y", 0.5),
        (0, "en", "x", 0.5),
        (1, "zh", "y", 0.4),
        (0, "en", "y", 0.7),
        (0, "en", "z", None),
        (1, "en", "x", 0.6),
        (1, "en", "y", 0.4),
        (1, "en", "z", 0.5),
        (2, "en", "x", 0.3),
        (2, "en", "y", 0.8),
        (2, "en", "z", 0.2),
        (3, "en", "x", 0.5),
        (3, "en", "z", None),
        (4, "en", "x", 0.9),
        (4, "en", "z", 0.1),
        (0, "zh", "x", 0.2),
        (0, "zh", "y", 0.1),
        (1, "zh", "x", 0.3),
    ]
    return pa.table(
        {
            "draw_index": pa.array([r[0] for r in rows], pa.int32()),
            "language_scope": [r[1] for r in rows],
            "model_id": [r[2] for r in rows],
            "hcq_total_frac": pa.array([r[3] for r in rows], pa.float64()),
        }
    )


def test_rank_reliability_by_hand():
    """Guards fct_rank_reliability column by column: observed total (points, fraction) and
    competition rank, null where the observed total is; top-1 probability with ties split over
    the draws that rank anyone; the inverse-CDF 2.5/97.5 % rank interval over the draws where
    the model has a total; n_draws those draws.
      en ranks per draw: x 1, 2, 1 (tie), 1; y 3, 1, 1 (tie), -; z 2, 3, -, 2.
         top1 x (1 + 0 + 1/2 + 1) / 4 = 0.625, y (0 + 1 + 1/2 + 0) / 4 = 0.375, z 0.
         intervals: x ranks {1, 1, 1, 2} -> [1, 2]; y {1, 1, 3} -> [1, 3]; z {2, 2, 3} -> [2, 3]
      zh only draw 1 ranks anyone (y 1, x 2): top1 x 0, y 1, z 0; z has no rank at all."""
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning, match="All-NaN"):
        got = rank_reliability(draws_table())  # z's zh ranks are all undefined
    names = (
        "model_id",
        "language_scope",
        "hcq_total",
        "hcq_total_frac",
        "rank",
        "top1_prob",
        "rank_lo",
        "rank_hi",
        "n_draws",
    )
    want = [
        ("x", "en", 50.0, 0.5, 2, 0.625, 1, 2, 4),
        ("y", "en", 70.0, 0.7, 1, 0.375, 1, 3, 3),
        ("z", "en", None, None, None, 0.0, 2, 3, 3),
        ("x", "zh", 20.0, 0.2, 1, 0.0, 2, 2, 1),
        ("y", "zh", 10.0, 0.1, 2, 1.0, 1, 1, 1),
        ("z", "zh", None, None, None, 0.0, None, None, 0),
    ]
    assert_rows(got, want, names)


def test_pairwise_reliability_by_hand():
    """Guards fct_pairwise_reliability: one row per scope and ordered pair of models whose
    observed totals are defined (z is left out), the observed difference in points, the
    linear-interpolation 2.5/97.5 % interval of the per-draw differences over the draws where
    both are defined, whether it excludes zero (either side), and those draws' count.
      en x - y per draw: 0.2, -0.5, 0.0, - -> sorted (-0.5, 0, 0.2): 2.5 % at position 0.05,
         -0.5 + 0.05 * 0.5 = -0.475; 97.5 % at 1.95, 0.95 * 0.2 = 0.19. Mirrored for y - x.
      zh x - y: only draw 1, -0.1: the interval is that one point, so it excludes zero (below
         it for x - y, above it for y - x) while the observed difference is +10."""
    got = pairwise_reliability(draws_table())
    names = (
        "language_scope",
        "model_a",
        "model_b",
        "diff",
        "ci_lo",
        "ci_hi",
        "excludes_zero",
        "n_draws",
    )
    want = [
        ("en", "x", "y", -20.0, -47.5, 19.0, False, 3),
        ("en", "y", "x", 20.0, -19.0, 47.5, False, 3),
        ("zh", "x", "y", 10.0, -10.0, -10.0, True, 1),
        ("zh", "y", "x", -10.0, 10.0, 10.0, True, 1),
    ]
    assert_rows(got, want, names)


def test_pairwise_interval_touching_zero_does_not_exclude_it():
    """Guards `excludes_zero` as strictly above or below zero: two draws where x - y is exactly
    0 give the interval [0, 0], which holds zero (`>=` or `<=` would say it excludes it)."""
    table = pa.table(
        {
            "draw_index": pa.array([0, 0, 1, 1, 2, 2], pa.int32()),
            "language_scope": ["en"] * 6,
            "model_id": ["x", "y"] * 3,
            "hcq_total_frac": [0.5, 0.4, 0.3, 0.3, 0.6, 0.6],
        }
    )
    rows = pairwise_reliability(table).to_pylist()
    assert [(r["ci_lo"], r["ci_hi"], r["excludes_zero"]) for r in rows] == [
        (0.0, 0.0, False),
        (0.0, 0.0, False),
    ]


def test_tables_without_any_defined_total_keep_their_column_types():
    """Guards the declared schemas (the marts' contracts) where every value of a column is null:
    a warehouse whose every judgment is missing (no valid answer, none answered) has no total,
    so the masking effect is all nulls, typed (float64 totals, int64 ranks), not NaN; the
    reliability tables of draws without a total keep theirs, and the pairwise table, with no
    pair to compare, keeps its eight columns."""
    stats = pa.table(
        {
            "concept_id": ["k1"],
            "model_id": ["a"],
            "language": ["en"],
            "capability": ["c1"],
            "score_num": [0],
            "score_den": [0],
            "n_yes": [0],
            "n_answered": [0],
            "n_missing": [2],
        }
    )
    masking = masking_effect(stats, CAPABILITIES, SCORE_SOURCES)
    assert masking.to_pylist() == [
        {
            "model_id": "a",
            "language_scope": "en",
            "hcq_masked": None,
            "hcq_unmasked": None,
            "rank_masked": None,
            "rank_unmasked": None,
            "rank_shift": None,
            "has_moved": None,
            "spearman_rho": None,
            "n_missing_judgments": 2,
        }
    ]
    assert masking.schema.field("hcq_unmasked").type == pa.float64()
    assert masking.schema.field("rank_shift").type == pa.int64()
    draws = pa.table(
        {
            "draw_index": pa.array([0, 1], pa.int32()),
            "language_scope": ["en", "en"],
            "model_id": ["a", "a"],
            "hcq_total_frac": pa.array([None, None], pa.float64()),
        }
    )
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        ranks = rank_reliability(draws)
    assert ranks.schema.field("hcq_total").type == pa.float64()
    assert ranks.schema.field("rank_lo").type == pa.int64()
    pairs = pairwise_reliability(draws)
    assert pairs.num_rows == 0
    assert pairs.column_names == [
        "language_scope",
        "model_a",
        "model_b",
        "diff",
        "ci_lo",
        "ci_hi",
        "excludes_zero",
        "n_draws",
    ]
