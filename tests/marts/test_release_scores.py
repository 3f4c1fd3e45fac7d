"""`fct_release_scores` (issue 32): a release's own score beside HCQ, on the hand world of
tests/worlds/release_scores.py (official judge J1). Every expected value is worked by hand below
from the world's answers (stored target-yes; `-` a missing answer)."""

from __future__ import annotations

import json

import pytest

from ingestion.bundle.format import write_bundle
from reporting.fingerprints import mart_fingerprints
from tests.helpers import build_warehouse, copy_warehouse, dbt_build, query
from tests.worlds.release_scores import (
    OFFICIAL_JUDGE,
    many_release_prompts_tables,
    write_release_scores_bundle,
)

COLUMNS = "release_score, n_prompts, n_questions, n_missing, hcq_total"
BUILD_VARS = {"official_judge": OFFICIAL_JUDGE}


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    root = tmp_path_factory.mktemp("release_scores")
    bundle = write_release_scores_bundle(root / "bundle")
    return build_warehouse(
        bundle,
        root / "w.duckdb",
        select=("+fct_release_scores",),
        # only the selected models' own tests: the singular tests read marts left out
        extra=("--indirect-selection", "cautious", "--vars", json.dumps(BUILD_VARS)),
    )


def score(warehouse, judge, model, release, form, level, scope) -> tuple | None:
    rows = query(
        warehouse,
        f"select {COLUMNS} from marts.fct_release_scores where judge_id = '{judge}' "
        f"and model_id = '{model}' and release = '{release}' and prompt_form = '{form}' "
        f"and scope_level = '{level}' and scope = '{scope}'",
    )
    assert len(rows) <= 1
    return tuple(round(v, 4) if isinstance(v, float) else v for v in rows[0]) if rows else None


def test_oneig_zeroes_only_under_a_direct_no_and_keeps_zeroed_questions(warehouse):
    """Guards against OneIG's score being METHOD 2 under another name (recursive masking, masked
    questions dropped) or a recursive zero-out. gA, J1, English Portrait: q1 -> q2 -> q3, q4;
    answers N Y Y Y. Zero-out: q2 under the failed q1 counts 0, q3 keeps its yes (its parent q2
    answered yes), so 0 + 0 + 1 + 1 over 4 = 50 (a recursive zero-out: 25). HCQ masks q2 and q3:
    humans 0/1, man_made 1/1, entities 0.5 -> 50."""
    assert score(warehouse, "J1", "gA", "oneig", "en", "category", "Portrait") == (
        50.0,
        1,
        4,
        0,
        50.0,
    )


def test_oneig_overall_is_the_mean_over_prompts_beside_hcq(warehouse):
    """Guards against pooling questions instead of averaging prompts, against a missing answer
    counted as "no", and against HCQ taken over other prompts than the score's. gA, J1, English:
    Portrait 0.5 (above); General_Object: Y and a missing answer, 1/1 (the missing one left
    out, counted). __all__ = (0.5 + 1) / 2 = 75 over 2 prompts, 5 answered questions, 1 missing
    (pooled questions would give 3/5 = 60; "no" for the missing one (0.5 + 0.5) / 2 = 50). HCQ
    over both prompts: humans 0/1, man_made 2/2 (the missing color is invalid) -> 50."""
    assert score(warehouse, "J1", "gA", "oneig", "en", "overall", "__all__") == (
        75.0,
        2,
        5,
        1,
        50.0,
    )


def test_an_absent_image_is_missing_and_text_rendering_has_no_alignment_score(warehouse):
    """Guards against an image the judge never answered about scoring 0 and against OneIG's
    OCR-scored text prompts entering its alignment score. gB, J1, English: Portrait Y N Y N ->
    1 + 0 + 0 (under q2's no) + 0 = 25; its General_Object image is absent: no score, its 2
    questions missing; __all__ = 25 over the one scored prompt. HCQ: humans 1, man_made 0
    (entities 0.5), color 0 (attributes 0) -> 25."""
    assert score(warehouse, "J1", "gB", "oneig", "en", "category", "General_Object") == (
        None,
        0,
        0,
        2,
        None,
    )
    assert score(warehouse, "J1", "gB", "oneig", "en", "overall", "__all__") == (
        25.0,
        1,
        4,
        2,
        25.0,
    )
    scopes = query(warehouse, "select distinct scope from marts.fct_release_scores")
    assert ("Text_Rendering",) not in scopes


def test_each_language_is_its_own_oneig_score(warehouse):
    """Guards against mixing the EN and ZH leaderboards. gA, J1, Chinese Portrait Y N Y Y ->
    1 + 0 + 0 (under q2's no) + 1 = 50; HCQ humans 1, man_made 1 (entities 1), color 0
    (attributes 0; state masked) -> 50. gB: Y Y Y Y -> 100, HCQ 100."""
    assert score(warehouse, "J1", "gA", "oneig", "zh", "overall", "__all__") == (
        50.0,
        1,
        4,
        0,
        50.0,
    )
    assert score(warehouse, "J1", "gB", "oneig", "zh", "overall", "__all__")[0] == 100.0


def test_every_judge_has_its_own_scores_and_hcq(warehouse):
    """Guards against scoring only the official judge, or another judge's rows with the official
    judge's HCQ. J2 on gA, English: Portrait Y Y Y Y -> 100; General_Object N Y -> 0 + 0 (under
    q1's no) = 0; __all__ 50. J2's HCQ: humans 1, man_made 1/2 (entities 0.75), color 1, state 1
    (attributes 1; General_Object's color masked) -> 87.5. J2 never answered gA's Chinese image:
    no score, 4 missing."""
    assert score(warehouse, "J2", "gA", "oneig", "en", "overall", "__all__") == (
        50.0,
        2,
        6,
        0,
        87.5,
    )
    assert score(warehouse, "J2", "gA", "oneig", "zh", "overall", "__all__")[:4] == (
        None,
        0,
        0,
        4,
    )
    official = query(
        warehouse, "select distinct judge_id, is_official_judge from marts.fct_release_scores"
    )
    assert sorted(official) == [("J1", True), ("J2", False)]


def test_tiif_dimension_is_the_pooled_share_of_compliant_answers(warehouse):
    """Guards against masking, prompt-first averaging or the raw answer in TIIF's score. gA, J1,
    short: numeracy pools Y N Y and Y = 3/4 = 75 (prompt means: 83.3); negation N Y (the stored,
    target-yes answers: the negated q2 complies) = 50, although METHOD 2 masks q2 under the
    failed q1 (HCQ: man_made 0 -> 0). HCQ of numeracy: quantification 2/3, spatial 1 -> 83.3."""
    assert score(warehouse, "J1", "gA", "tiif-testmini", "short", "dimension", "numeracy") == (
        75.0,
        2,
        4,
        0,
        83.3333,
    )
    assert score(warehouse, "J1", "gA", "tiif-testmini", "short", "dimension", "negation") == (
        50.0,
        1,
        2,
        0,
        0.0,
    )


def test_tiif_groups_parts_and_overall_are_means_of_means(warehouse):
    """Guards against pooling questions across dimensions and against averaging groups where
    TIIF averages dimensions. gA, J1, short: negation 50, numeracy 75, 2d_spatial_relation 100,
    style 0. basic_following/reasoning = (50 + 75) / 2 = 62.5; the part basic_following = mean
    of its three dimensions, (50 + 75 + 100) / 3 = 75 (mean of its groups: 81.25); __all__ =
    mean of the groups, (62.5 + 100 + 0) / 3 = 54.17 over 5 prompts and 8 questions. HCQ over
    all five prompts: man_made 0 (entities 0), quantification 2/3 and spatial 1 (relations 5/6),
    style 0 (semantics 0; the negation masked) -> 5/18 = 27.78."""
    tiif = ("J1", "gA", "tiif-testmini", "short")
    assert score(warehouse, *tiif, "group", "basic_following/reasoning")[:3] == (62.5, 3, 6)
    assert score(warehouse, *tiif, "part", "basic_following")[0] == 75.0
    assert score(warehouse, *tiif, "overall", "__all__") == (54.1667, 5, 8, 0, 27.7778)


def test_tiif_long_form_apart_and_missing_left_out(warehouse):
    """Guards against mixing short and long descriptions and against a missing answer counted
    as wrong. gA, J1, long: every answer yes but numeracy's q3, missing: numeracy 3/3 = 100, 1
    missing; __all__ 100 over 7 answered questions. gB has only its short style image: 100 there,
    every other dimension NULL with its questions missing, __all__ the mean of the one group with
    a score; its long form has no score at all."""
    assert score(warehouse, "J1", "gA", "tiif-testmini", "long", "dimension", "numeracy")[:4] == (
        100.0,
        2,
        3,
        1,
    )
    assert score(warehouse, "J1", "gA", "tiif-testmini", "long", "overall", "__all__")[:4] == (
        100.0,
        5,
        7,
        1,
    )
    assert score(warehouse, "J1", "gB", "tiif-testmini", "short", "overall", "__all__")[:4] == (
        100.0,
        1,
        1,
        7,
    )
    assert score(warehouse, "J1", "gB", "tiif-testmini", "long", "overall", "__all__")[:4] == (
        None,
        0,
        0,
        8,
    )


@pytest.fixture(scope="module")
def many_prompts(tmp_path_factory):
    """The many-prompts release world, its seeds and models up to the mart built (no tests: the
    hand world's figures above are the checks of what they compute)."""
    root = tmp_path_factory.mktemp("many_release_prompts")
    write_bundle(root / "bundle", many_release_prompts_tables(seed=20261205), "jsonl")
    select = ("+fct_release_scores",)
    extra = ("--exclude", "resource_type:test", "--vars", json.dumps(BUILD_VARS))
    return build_warehouse(root / "bundle", root / "w.duckdb", select, extra)


def test_the_scores_do_not_depend_on_the_order_rows_were_written_in(many_prompts, tmp_path):
    """The determinism tier's shuffle check (tests/qct2i/test_determinism.py) runs on a world
    with no converted release, where this mart is empty; the hand world above has too few
    values per mean for their order to show. Here, over hundreds of prompts, every table up to
    the mart is rewritten in a pseudo-random row order as soon as its model has built (dbt var
    `shuffle_seed`), and the scores must be the unshuffled run's, byte for byte. Guards against a
    mean over rows taken in written order (a float sum's last bits follow the order of its
    terms): without its `order by`, OneIG's mean over prompts fails here."""
    shuffled = copy_warehouse(many_prompts, tmp_path)
    shuffle = json.dumps({**BUILD_VARS, "shuffle_seed": 20261205})
    dbt_build(shuffled, ("+fct_release_scores",), ("--vars", shuffle), command="run")
    rows = "select judge_id, model_id, release, scope from marts.fct_release_scores limit 12"
    assert query(shuffled, rows) != query(many_prompts, rows)  # rewritten, reordered
    fingerprints = mart_fingerprints(shuffled), mart_fingerprints(many_prompts)
    # at least every OneIG category and TIIF dimension of both generators
    assert fingerprints[0]["fct_release_scores"]["rows"] >= 2 * (4 + 6)
    assert fingerprints[0]["fct_release_scores"] == fingerprints[1]["fct_release_scores"]
