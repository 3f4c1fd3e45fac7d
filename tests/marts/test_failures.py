"""Where each generator fails (issue 24) on the hand bundle (tests/worlds/hand.py), every figure
worked by hand: fct_capability_deficits' scores, field means, deficits and their concept-bootstrap
intervals, and fct_failure_examples' failed questions.

The intervals are exact here: with two concepts (cA, cB) a bootstrap draw holds cA twice, both
once, or cB twice, with probabilities 1/4, 1/2, 1/4, so over 2,000 draws the 2.5% and 97.5%
percentiles are the smallest and largest deficit among the draws where it is defined.
"""

from __future__ import annotations

import pytest

from tests.helpers import query

COLUMNS = (
    "score, field_mean, n_field_models, deficit, deficit_ci_lo, deficit_ci_hi, is_below_field, "
    "deficit_rank"
)


def _deficit(warehouse, model: str, scope: str, capability: str) -> tuple:
    (row,) = query(
        warehouse,
        f"select {COLUMNS} from marts.fct_capability_deficits where model_id = '{model}' "
        f"and language_scope = '{scope}' and capability = '{capability}'",
    )
    return row


def _close(row: tuple, expected: tuple) -> None:
    for got, want in zip(row, expected, strict=True):
        if isinstance(want, float):
            assert got == pytest.approx(want, abs=1e-9), (row, expected)
        else:
            assert got == want, (row, expected)


def test_text_deficits_and_their_intervals_by_hand(hand_published):
    """Text Rendering from the transcriptions (1 - D / L per scope, tests/worlds/hand.py):
    m1 en: cA D 2 of L 11, cB D 4 of 4 -> 1 - 6/15 = 60; m2 en: only cB (D 4 of 4) -> 0.
    Pooled adds m1's zh (cA D 1 of 3, cB 0 of 2): m1 1 - 7/20 = 65, m2 0.
    m2's deficit per draw (it needs cB): both concepts once: -65 (pooled) / -60 (en); cB twice:
    m1 = 1 - 8/12 = 33.33 pooled, 1 - 8/8 = 0 en, so m2's deficit is -33.33 / 0."""
    _close(
        _deficit(hand_published, "m2", "pooled", "text_rendering"),
        (0.0, 65.0, 1, -65.0, -65.0, -100 / 3, True, 1),
    )
    _close(
        _deficit(hand_published, "m1", "pooled", "text_rendering"),
        (65.0, 0.0, 1, 65.0, 100 / 3, 65.0, False, 7),
    )
    # en: the interval reaches 0 (cB twice: both score 0), so not below the field; m2's
    # man_made (cA-en q4: no, against m1's yes: -100) is further below
    _close(
        _deficit(hand_published, "m2", "en", "text_rendering"),
        (0.0, 60.0, 1, -60.0, -60.0, 0.0, False, 2),
    )
    _close(
        _deficit(hand_published, "m2", "en", "man_made"),
        (0.0, 100.0, 1, -100.0, -100.0, -100.0, True, 1),
    )


def test_judged_deficits_by_hand(hand_published):
    """Color (cA q2 under q1): m1 answers no in en, yes in zh -> pooled 1/2 = 50; m2's en q1 is
    missing, so q2 is masked and m2's only valid color question (zh) is yes -> 100. Color lives
    in cA alone, so every draw with cA gives the same ratio: the interval is the point."""
    _close(
        _deficit(hand_published, "m1", "pooled", "color"),
        (50.0, 100.0, 1, -50.0, -50.0, -50.0, True, 1),
    )
    # en: m2 has no valid animals question (q1 missing), so m1 has no field there
    _close(
        _deficit(hand_published, "m1", "en", "animals"),
        (100.0, None, 0, None, None, None, False, None),
    )


def test_every_scored_capability_has_a_row_and_the_ranks_count_up(hand_published):
    scored = query(
        hand_published,
        "select model_id, language_scope, capability from marts.fct_capability_scores "
        "where score is not null order by all",
    )
    rows = query(
        hand_published,
        "select model_id, language_scope, capability from marts.fct_capability_deficits "
        "order by all",
    )
    assert rows == scored
    ranks = query(
        hand_published,
        "select model_id, language_scope, list(deficit_rank order by deficit_rank), "
        "count(deficit) from marts.fct_capability_deficits where deficit is not null "
        "group by all",
    )
    for _, _, listed, n in ranks:
        assert listed == list(range(1, n + 1))


def test_failure_examples_by_hand(hand_published):
    """Valid questions the judge answered no (tests/worlds/hand.py ANSWERS): m1 cA-en q2 (color,
    under q1 yes), cA-en q7 and cB-en q2 (text_rendering, under q4 yes / a root); m2 cA-en q4
    (man_made, a root). m2's cA-en q1 is missing: not a "no", so no example."""
    rows = query(
        hand_published,
        "select model_id, capability, example_rank, prompt_id, question_id, question_text, "
        "prompt_text, judge_answers, n_judges_no, n_judges_answered, image_path "
        "from marts.fct_failure_examples order by all",
    )
    assert rows == [
        ("m1", "color", 1, "cA-en", "q2", "color?", "cA in en", "default: no", 1, 1, None),
        ("m1", "text_rendering", 1, "cA-en", "q7", "text_rendering?", "cA in en", "default: no",
         1, 1, None),
        ("m1", "text_rendering", 2, "cB-en", "q2", "text_rendering?", "cB in en", "default: no",
         1, 1, None),
        ("m2", "man_made", 1, "cA-en", "q4", "man_made?", "cA in en", "default: no", 1, 1, None),
    ]  # fmt: skip
