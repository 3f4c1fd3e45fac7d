"""The structure marts on the hand bundle (tests/marts/hand_bundle.py), every value by hand.

cA (7 questions) is one component: q1 -> q2 -> q3, q1 -> q5 <- q4, q4 -> q6, q4 -> q7; its tags
animals, color, texture, man_made, spatial, text_rendering (6). cB: two lone roots, style (q1)
and text_rendering (q2).
"""

from __future__ import annotations

import pytest

from tests.helpers import query


@pytest.fixture(scope="module")
def warehouse(hand_published):
    """The session's hand warehouse (every mart built; read only here)."""
    return hand_published


def test_component_exactness_root_survival_descendant_completion(warehouse):
    got = {
        (m, c): (e, r, d)
        for m, c, e, r, d in query(
            warehouse,
            "select model_id, component_id, exact, root_survival, descendant_completion "
            "from marts.fct_component_exactness",
        )
    }
    # m1 cA-en [Y,N,Y,Y,Y,Y,N]: roots q1, q4 yes; q2 valid and no -> exact 0, descendants 0.
    assert got["m1", "cA-en#1"] == (0, 1, 0)
    # m2 cA-en [-,Y,Y,N,Y,Y,Y]: q1 missing, q4 a valid no: exact 0, root 0, no descendant figure.
    assert got["m2", "cA-en#1"] == (0, 0, None)
    # m1 cB-en [Y, N]: two lone roots, one succeeds, one fails; no descendants.
    assert got["m1", "cB-en#1"] == (1, 1, None)
    assert got["m1", "cB-en#2"] == (0, 0, None)
    # zh: all yes.
    assert got["m1", "cA-zh#1"] == (1, 1, 1)


def test_exactness_by_tag_count_buckets(warehouse):
    got = {
        (m, lang, b): (e, n_c, n_p)
        for m, lang, b, e, n_c, n_p in query(
            warehouse,
            "select model_id, language, n_tags_bucket, exact_completion, n_components, n_prompts "
            "from marts.agg_exactness_by_tag_count",
        )
    }
    assert got["m1", "en", "6"] == (0.0, 1, 1)
    assert got["m1", "en", "1"] == (50.0, 2, 1)  # cB-en: (1 + 0) / 2 within the one prompt
    assert got["m2", "en", "1"] == (100.0, 2, 1)
    assert got["m1", "zh", "6"] == (100.0, 1, 1)


def test_pairs_by_context(warehouse):
    got = dict(
        query(
            warehouse,
            "select prompt_id || ':' || context, count(*) from intermediate.int_question_pairs "
            "where prompt_id like '%-en' group by all",
        )
    )
    # cA: 6 edges; 21 pairs in one component minus 7 related ones (6 edges + q1..q3) = 14 nonanc.
    assert got == {"cA-en:edge": 6, "cA-en:nonanc": 14, "cB-en:disc": 1}


def test_atlas_and_tag_sets(warehouse):
    (row,) = query(
        warehouse,
        "select n_prompts, n_components, n_multi_tag_components, "
        "n_prompts_with_multi_tag_component from marts.agg_dsg_atlas where language = 'en'",
    )
    assert row == (2, 3, 1, 1)
    got = dict(
        query(
            warehouse,
            "select tag_set, n_components from marts.agg_tag_set_frequencies where language = 'en'",
        )
    )
    assert got == {
        "animals+color+man_made+spatial+text_rendering+texture": 1,
        "style": 1,
        "text_rendering": 1,
    }


def test_coupling_marts_are_empty_without_cross_prompt_strata(warehouse):
    # Each stratum occurs in one prompt per language only: no leave-one-prompt-out marginal, so
    # no Delta and no contrast; the marts say so by having no rows rather than inventing zeros.
    assert query(warehouse, "select count(*) from marts.fct_coupling") == [(0,)]
    assert query(warehouse, "select count(*) from marts.fct_coupling_contrast") == [(0,)]
