"""Where each generator fails (issues 24, 32) on the hand bundle (tests/worlds/hand.py), every
figure worked by hand: fct_capability_deficits' scores, field means, deficits, their
concept-bootstrap intervals and draw counts, and fct_failure_examples' failed questions; then the
hand bundle with a second judge and questions whose compliant answer is "no" (one build of the
examples mart alone), where the examples must give each judge's own word and their order shows.

The intervals are exact here: with two concepts (cA, cB) a bootstrap draw holds cA twice, both
once, or cB twice, with probabilities 1/4, 1/2, 1/4, so over 2,000 draws the 2.5% and 97.5%
percentiles are the smallest and largest deficit among the draws where it is defined.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import yaml

from ingestion.bundle.format import write_bundle
from ingestion.paths import PROJECT_ROOT
from method.bootstrap import concept_weights
from tests.helpers import build_warehouse, query, warehouse_in
from tests.worlds.hand import hand_bundle_tables

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


def test_draw_counts_are_the_draws_where_the_deficit_is_defined(hand_published):
    """n_draws counts the draws in which the deficit is defined, not every draw (the report's
    chart quotes it). Pooled color needs cA (only cA has color questions), m2's pooled text
    rendering needs cB (m2 has no cA text evidence), and m1's en animals has no field: 0. The
    draws holding each concept are counted from the bootstrap's weights (concepts in id order,
    the dbt vars' draws and seed), not from method.deficits. Planted bug it catches (issue 36):
    `n_draws = np.full(observed.shape, len(replicates))` in method/deficits.py (2000 != 1488)."""
    project = yaml.safe_load((PROJECT_ROOT / "dbt_project.yml").read_text(encoding="utf-8"))
    draws = int(project["vars"]["reliability_bootstrap_draws"])
    seed = int(project["vars"]["reliability_bootstrap_seed"])
    weights = np.concatenate(list(concept_weights(2, draws, seed)))
    with_ca, with_cb = (int(n) for n in (weights > 0).sum(axis=0))
    assert with_ca < draws and with_cb < draws  # a count of every draw would differ
    n_draws = dict(
        ((model, scope, capability), n)
        for model, scope, capability, n in query(
            hand_published,
            "select model_id, language_scope, capability, n_draws "
            "from marts.fct_capability_deficits",
        )
    )
    assert n_draws["m1", "pooled", "color"] == n_draws["m2", "pooled", "color"] == with_ca
    assert n_draws["m2", "pooled", "text_rendering"] == with_cb
    assert n_draws["m1", "en", "animals"] == 0


def test_failure_examples_by_hand(hand_published):
    """Valid questions the judge answered no (tests/worlds/hand.py ANSWERS): m1 cA-en q2 (color,
    under q1 yes), cA-en q7 and cB-en q2 (text_rendering, under q4 yes / a root); m2 cA-en q4
    (man_made, a root). m2's cA-en q1 is missing: not a "no", so no example. Every compliant
    answer is yes, so the judge's own word is the stored one. m1's two text_rendering failures
    tie on the judges (one judge, failing both): the tie-break is md5 of the ids, and
    md5("m1/cB-en/q2") = 7c78... < md5("m1/cA-en/q7") = 85db...: cB first, not the alphabet."""
    assert _md5("m1/cB-en/q2") < _md5("m1/cA-en/q7")
    rows = query(
        hand_published,
        "select model_id, capability, example_rank, concept_id, prompt_id, question_id, "
        "question_text, prompt_text, compliant_answer, judge_answers, judge_raw_answers, judges, "
        "n_judges_no, n_judges_failing, n_judges_complying, n_judges_answered, image_path "
        "from marts.fct_failure_examples order by all",
    )
    default_no = "default: no"
    said_no = [{"judge_id": "default", "raw_answer": "no", "complies": False}]
    assert rows == [
        ("m1", "color", 1, "cA", "cA-en", "q2", "color?", "cA in en", "yes", default_no,
         default_no, said_no, 1, 1, 0, 1, None),
        ("m1", "text_rendering", 1, "cB", "cB-en", "q2", "text_rendering?", "cB in en", "yes",
         default_no, default_no, said_no, 1, 1, 0, 1, None),
        ("m1", "text_rendering", 2, "cA", "cA-en", "q7", "text_rendering?", "cA in en", "yes",
         default_no, default_no, said_no, 1, 1, 0, 1, None),
        ("m2", "man_made", 1, "cA", "cA-en", "q4", "man_made?", "cA in en", "yes", default_no,
         default_no, said_no, 1, 1, 0, 1, None),
    ]  # fmt: skip


def _md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


# -- the hand world with a second judge and questions whose compliant answer is "no" ----------
#
# Answers are stored target-yes (a stored yes complies): on a question whose compliant answer is
# "no", a stored "no" is the judge's "yes". Three new concepts, one root logical_constraints
# question each (cC in both languages):
NEW_QUESTIONS = {  # prompt: (concept, the question as written, compliant answer; None = yes)
    "cC-en": ("cC", "Is there a cat in the image?", "no"),
    "cC-zh": ("cC", "图里有猫吗？", "no"),
    "cD-en": ("cD", "Is the boy made of fabric?", "no"),
    "cE-en": ("cE", "Is the clock showing noon?", None),
}
NEW_ANSWERS = {  # (model, prompt): stored answers of (default, second); None = missing
    ("m1", "cC-en"): ("no", "no"),  # both judges said "yes": a cat where none should be
    ("m1", "cC-zh"): ("no", None),  # the same concept failing with one judge (second missing)
    ("m1", "cD-en"): ("no", None),
    ("m1", "cE-en"): ("no", "no"),
    ("m2", "cC-en"): ("yes", "yes"),
    ("m2", "cC-zh"): ("yes", "yes"),
    ("m2", "cD-en"): ("no", "yes"),  # default said "yes", second "no" (complies)
    ("m2", "cE-en"): ("no", None),
}
# The second judge answers the hand questions as the default judge, but passes m1's cA-en q7.
SECOND_PASSES = ("m1", "cA-en", "q7")


def two_judge_tables() -> dict[str, list[dict]]:
    tables = hand_bundle_tables()
    second = [dict(row, judge_id="second") for row in tables["judgments"]]
    for row in second:
        if (row["model_id"], row["prompt_id"], row["question_id"]) == SECOND_PASSES:
            row["answer"] = "yes"
    for prompt_id, (concept, text, compliant) in NEW_QUESTIONS.items():
        language = prompt_id.split("-")[1]
        tables["prompts"].append(
            {
                "prompt_id": prompt_id,
                "concept_id": concept,
                "language": language,
                "source": "hand",
                "text": f"{concept} in {language}",
            }
        )
        tables["questions"].append(
            {
                "prompt_id": prompt_id,
                "question_id": "q1",
                "text": text,
                "capability": "logical_constraints",
                "parents": [],
                "entity": None,
                "text_target": None,
                "compliant_answer": compliant,
            }
        )
    for (model_id, prompt_id), answers in NEW_ANSWERS.items():
        for judge_id, answer in zip(("default", "second"), answers, strict=True):
            judgment = {"prompt_id": prompt_id, "model_id": model_id, "question_id": "q1"}
            judgment |= {"answer": answer, "p_yes": None, "judge_id": judge_id}
            (tables["judgments"] if judge_id == "default" else second).append(judgment)
    tables["judgments"] += second
    return tables


@pytest.fixture(scope="module")
def two_judge_examples(tmp_path_factory) -> list[tuple]:
    """fct_failure_examples of the two-judge hand world (this file's one build: the examples
    mart and what it reads, its own tests only)."""
    root = tmp_path_factory.mktemp("two-judge-failures")
    write_bundle(root / "bundle", two_judge_tables())
    warehouse = build_warehouse(
        root / "bundle",
        warehouse_in(root / "warehouse"),
        ("+fct_failure_examples",),
        ("--indirect-selection", "cautious"),
    )
    return query(
        warehouse,
        "select model_id, capability, example_rank, prompt_id, question_text, compliant_answer, "
        "judge_answers, judge_raw_answers, judges, n_judges_no, n_judges_failing, "
        "n_judges_complying, n_judges_answered from marts.fct_failure_examples order by all",
    )


def _judges(*said: tuple[str, str | None]) -> list[dict]:
    """The mart's `judges` for (judge, own word) pairs of a question whose compliant answer is
    `no`: a word complies when it is "no"; a missing word complies with nothing (null)."""
    return [
        {"judge_id": j, "raw_answer": w, "complies": None if w is None else w == "no"}
        for j, w in said
    ]


def test_a_compliant_no_question_shows_the_judges_own_word(two_judge_examples):
    """The bug: a question whose compliant answer is "no" printed its stored (turned) answer,
    "Is the boy made of fabric? default: no" where the judge said yes. By hand from NEW_ANSWERS:
    m1 cD-en: stored default no -> said "yes" (fails), second missing; m2 cD-en: stored default
    no -> "yes" (fails), stored second yes -> "no" (complies)."""
    rows = {(r[0], r[3]): r for r in two_judge_examples if r[3] == "cD-en"}
    assert rows["m1", "cD-en"][4:] == (
        "Is the boy made of fabric?", "no", "default: no; second: missing",
        "default: yes; second: missing", _judges(("default", "yes"), ("second", None)),
        1, 1, 0, 1,
    )  # fmt: skip
    assert rows["m2", "cD-en"][4:] == (
        "Is the boy made of fabric?", "no", "default: no; second: yes",
        "default: yes; second: no", _judges(("default", "yes"), ("second", "no")),
        1, 1, 1, 2,
    )  # fmt: skip


def test_examples_one_per_concept_most_judges_failing_first(two_judge_examples):
    """The order of the examples, by hand (the yml's): one per concept, then more judges failing,
    then fewer passing, then md5 of model/prompt/question ascending.

    m1 logical_constraints: cC-en and cE-en fail with both judges, cC-zh and cD-en with one (the
    other missing). cC-en and cC-zh are one concept, and its failure with more judges stands for
    it: cC-en, though md5 alone (4984... < dd6e...) would pick cC-zh; then cE-en (1dec...)
    before cC-en, and cD-en last. Without one per concept, cC-zh (4984... < 7569...) would take
    cD-en's place; alphabetically cC would lead.
    m1 text_rendering: cB-en q2 fails with both judges, cA-en q7 with one (the second passes it):
    cB first, against the alphabet and the one-judge world's hash order.
    m2 logical_constraints: cD-en and cE-en each fail with one judge; cD-en's second judge passes
    it, cE-en's is missing: cE-en first, though md5 (d523... < f556...) would put cD-en first.
    Planted bugs it catches (issue 36): `ranked`'s order turned around (n_judges_failing asc,
    n_judges_complying desc) in fct_failure_examples.sql, and `one_per_concept`'s (it would
    keep cC-zh)."""
    assert _md5("m1/cC-zh/q1") < _md5("m1/cC-en/q1")
    assert _md5("m1/cE-en/q1") < _md5("m1/cC-en/q1")
    assert _md5("m1/cC-zh/q1") < _md5("m1/cD-en/q1")
    assert _md5("m2/cD-en/q1") < _md5("m2/cE-en/q1")
    order = [r[:4] for r in two_judge_examples]
    assert order == [
        ("m1", "color", 1, "cA-en"),
        ("m1", "logical_constraints", 1, "cE-en"),
        ("m1", "logical_constraints", 2, "cC-en"),
        ("m1", "logical_constraints", 3, "cD-en"),
        ("m1", "text_rendering", 1, "cB-en"),
        ("m1", "text_rendering", 2, "cA-en"),
        ("m2", "logical_constraints", 1, "cE-en"),
        ("m2", "logical_constraints", 2, "cD-en"),
        ("m2", "man_made", 1, "cA-en"),
    ]
    by_key = {r[:3]: r for r in two_judge_examples}
    # the cat question: both judges said "yes" where a compliant image gives "no"
    assert by_key["m1", "logical_constraints", 2][4:10] == (
        "Is there a cat in the image?", "no", "default: no; second: no",
        "default: yes; second: yes", _judges(("default", "yes"), ("second", "yes")), 2,
    )  # fmt: skip
    # m1's text_rendering q7: the second judge's "yes" complies
    assert by_key["m1", "text_rendering", 2][7:] == (
        "default: no; second: yes",
        [
            {"judge_id": "default", "raw_answer": "no", "complies": False},
            {"judge_id": "second", "raw_answer": "yes", "complies": True},
        ],
        1, 1, 1, 2,
    )  # fmt: skip
