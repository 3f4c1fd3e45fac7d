"""method/aggregation_robustness.py's `robustness_table` (fct_aggregation_robustness, METHOD 5,
Table 3) on hand worlds: only the dbt mart reached it until `make mutation` showed its mutants
uncovered by any unit test (issue 36). Expected values are worked out by hand in the comments, or
(the 1,000-concept scale) from Eq. 9's definition in plain Python over the subsamples."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from method.aggregation_robustness import robustness, robustness_table, subsample_matrix

# g1 = {c2, c1} (reporting order, not the alphabetical one), g2 = {c3}: with every capability
# available alpha = 1/4, 1/4, 1/2. Rows come in reporting order: c2, c1, c3, then the total.
CAPABILITIES = pa.table(
    {
        "capability": ["c3", "c2", "c1"],
        "group_key": ["g2", "g1", "g1"],
        "group_order": [2, 1, 1],
        "capability_order": [1, 1, 2],
    }
)
NAMES = (
    "language",
    "capability",
    "scale",
    "variance_ratio",
    "variance_increase_frac",
    "n_prompts",
    "short_error_question_points",
    "short_error_prompt_points",
    "short_error_increase_frac",
    "n_models",
    "n_subsamples",
)


def prompt_stats(rows) -> pa.Table:
    """int_prompt_sufficient_stats' columns that `robustness_table` reads, from tuples."""
    names = ("prompt_id", "concept_id", "model_id", "language", "capability")
    names += ("n_valid", "n_questions")
    return pa.table({name: [row[i] for row in rows] for i, name in enumerate(names)})


def assert_rows(got: pa.Table, want: list[tuple]):
    """Row by row: None where `want` has None, floats to 1e-12, the rest exactly."""
    got_rows = got.to_pylist()
    assert len(got_rows) == len(want)
    for row, expected in zip(got_rows, want, strict=True):
        for name, value in zip(NAMES, expected, strict=True):
            if isinstance(value, float):
                assert row[name] == pytest.approx(value, abs=1e-12), (name, row)
            else:
                assert row[name] == value, (name, row)


def test_robustness_table_by_hand():
    """Guards fct_aggregation_robustness row by row: Eq. 9 per capability and Vp / Vq per
    language averaged over the models that define them, the prompts counted, the short prompts
    (at most 3 questions for every model: p1 has exactly 3, p2 has 5 for model a) and the
    one-short-prompt error under each rule, in points.

    en (prompts p1 = k1, p2 and p3 = k2), n_valid per prompt p1, p2, p3:
      a: c1 1, 3, 0 -> N 4, P 2, sum 1/n 4/3: Eq. 9 (4/2)(4/3 / 2) = 4/3
         c2 0, 1, 0 -> 1;  c3 2, 0, 1 -> N 3, P 2, 3/2: (3/2)(3/4) = 9/8
         Vq = (1/16)/4 + (1/16)/1 + (1/4)/3 = 31/192, Vp = (1/16)(4/3)/4 + 1/16 + (1/4)(3/2)/4
         = 34/192 -> 34/31. Short p1, p3: flips of 1 (c1 of p1), 2 (c3 of p1), 1 (c3 of p3)
         judgments: question rule 1/16, 1/6, 1/6, 1/6 -> 9/64; prompt rule 1/8, 1/8, 1/8, 1/4
         -> 5/32.
      b: c1 1, 0, 1; c2 0, 2, 0; c3 1, 0, 0 -> Eq. 9 1, 1, 1; Vp = Vq = 5/16 -> 1. Short flips:
         c1 of p1 and p3, c3 of p1: 1/4, 1/4, 1/2 under both rules -> 1/4.
      rows: c1 (4/3 + 1) / 2 = 7/6 over P (2 + 2) / 2; c2 1 over 1; c3 (9/8 + 1) / 2 over 1.5;
      total (34/31 + 1) / 2 = 65/62 over 3 prompts, errors 100 (9/64 + 1/4) / 2 = 19.53125
      and 100 (5/32 + 1/4) / 2 = 20.3125 points, increase (13/64) / (25/128) - 1 = 0.04.
    zh (p4 = k1, 4 questions for a: not short): a has no valid answer, b c2 2 -> Eq. 9 1.
      c1, c3 undefined for both models (None) over 0 prompts; c2 1 (a skipped) over 0.5; total
      1 (a's Vq = 0 leaves it out) over 0.5 prompts; no short prompt: the errors are None.
    de (p5 = k3, short, but no valid answer from anyone): every figure None, 0 prompts.
    """
    rows = [
        ("p1", "k1", "a", "en", "c1", 1, 1),
        ("p1", "k1", "a", "en", "c3", 2, 2),
        ("p2", "k2", "a", "en", "c1", 3, 3),
        ("p2", "k2", "a", "en", "c2", 1, 2),
        ("p3", "k2", "a", "en", "c1", 0, 1),
        ("p3", "k2", "a", "en", "c3", 1, 1),
        ("p1", "k1", "b", "en", "c1", 1, 1),
        ("p1", "k1", "b", "en", "c3", 1, 2),
        ("p2", "k2", "b", "en", "c2", 2, 2),
        ("p3", "k2", "b", "en", "c1", 1, 1),
        ("p4", "k1", "a", "zh", "c1", 0, 4),
        ("p4", "k1", "b", "zh", "c2", 2, 2),
        ("p5", "k3", "a", "de", "c1", 0, 1),
    ]
    got = robustness_table(prompt_stats(rows), CAPABILITIES, seed=0)
    na = (None, None, None)
    want = [
        ("de", "c2", "full", None, None, 0.0, *na, 2, 1),
        ("de", "c1", "full", None, None, 0.0, *na, 2, 1),
        ("de", "c3", "full", None, None, 0.0, *na, 2, 1),
        ("de", "__total__", "full", None, None, 0.0, *na, 2, 1),
        ("en", "c2", "full", 1.0, 0.0, 1.0, *na, 2, 1),
        ("en", "c1", "full", 7 / 6, 1 / 6, 2.0, *na, 2, 1),
        ("en", "c3", "full", 1.0625, 0.0625, 1.5, *na, 2, 1),
        ("en", "__total__", "full", 65 / 62, 3 / 62, 3.0, 19.53125, 20.3125, 0.04, 2, 1),
        ("zh", "c2", "full", 1.0, 0.0, 0.5, *na, 2, 1),
        ("zh", "c1", "full", None, None, 0.0, *na, 2, 1),
        ("zh", "c3", "full", None, None, 0.0, *na, 2, 1),
        ("zh", "__total__", "full", 1.0, 0.0, 0.5, *na, 2, 1),
    ]
    assert_rows(got, want)


def eq9(counts) -> float:
    """Eq. 9 from its definition: mean(n) * mean(1/n) over the prompts with n > 0."""
    counts = [n for n in counts if n > 0]
    return sum(counts) / len(counts) * sum(1 / n for n in counts) / len(counts)


@pytest.mark.parametrize("n_concepts", [1000, 1001])
def test_the_thousand_concept_scale_only_above_a_thousand_concepts(n_concepts):
    """Guards Table 3's second scale: present only with more than 1,000 concepts, 200 random
    1,000-concept subsets drawn with the table's seed, each figure the mean over them. One model,
    one prompt per concept (2 questions, so short), concept i with 1 + i % 3 valid answers of
    c1: Eq. 9 per subsample from the definition over the concepts it holds; one flipped short
    judgment moves the total by 1/N (question rule) or 1/(P n) (prompt rule), averaged over the
    N judgments: 1/N and 1/N as well (P prompts, each n of its n judgments weighing 1/(P n))."""
    seed = 5
    n_valid = [1 + i % 3 for i in range(n_concepts)]
    rows = [(f"p{i:04d}", f"k{i:04d}", "m", "en", "c1", n_valid[i], 2) for i in range(n_concepts)]
    got = robustness_table(prompt_stats(rows), CAPABILITIES, seed=seed)
    ratio, n_total = eq9(n_valid), sum(n_valid)
    na = (None, None, None)
    want = [
        ("en", "c2", "full", None, None, 0.0, *na, 1, 1),
        ("en", "c1", "full", ratio, ratio - 1, float(n_concepts), *na, 1, 1),
        ("en", "c3", "full", None, None, 0.0, *na, 1, 1),
        ("en", "__total__", "full", ratio, ratio - 1, float(n_concepts), 100 / n_total,
         100 / n_total, 0.0, 1, 1),
    ]  # fmt: skip
    if n_concepts > 1000:
        chosen = subsample_matrix(n_concepts, 1000, 200, seed) == 1
        subsets = [[n for n, c in zip(n_valid, row, strict=True) if c] for row in chosen]
        ratio = float(np.mean([eq9(s) for s in subsets]))
        error = float(np.mean([100 / sum(s) for s in subsets]))
        want += [
            ("en", "c2", "1000", None, None, 0.0, *na, 1, 200),
            ("en", "c1", "1000", ratio, ratio - 1, 1000.0, *na, 1, 200),
            ("en", "c3", "1000", None, None, 0.0, *na, 1, 200),
            ("en", "__total__", "1000", ratio, ratio - 1, 1000.0, error, error, 0.0, 1, 200),
        ]
    assert_rows(got, want)


def test_one_short_judgment_is_enough_for_the_short_prompt_errors():
    """Guards the one-short-prompt-error figures defined as soon as one valid judgment sits in a
    short prompt (not only from two): one prompt, one capability, one valid judgment: the total
    moves by alpha / N = 1 under the question rule and alpha / (P n) = 1 under the prompt rule.
    Every figure is a float array (an undefined one NaN, never an object array holding None)."""
    r = robustness(np.ones((1, 1, 1)), np.array([True]), np.array([0]), np.ones((1, 1)), ("g",))
    assert all(values.dtype == float for values in r.values())
    assert r["short_error_question"].tolist() == [[1.0]]
    assert r["short_error_prompt"].tolist() == [[1.0]]
