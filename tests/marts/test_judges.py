"""The judge marts (METHOD 14-15) raw to marts with real dbt: the tiny two-judge world with human
ratings (tests/worlds/judges.py) against figures worked by hand, and a one-judge world without
ratings, where both marts build empty; and the real TIFA160 release (three judges, human Likert
ratings) against kappa computed straight from its CSVs."""

from __future__ import annotations

import math

import pytest
from scipy.stats import kendalltau, spearmanr

from ingestion.sources.dsg_release import convert_release
from tests.helpers import build_warehouse, query, require_test_data, warehouse_in
from tests.ingestion.sources.test_dsg_release import ANNS, ANSWERS, JUDGES, csv_rows
from tests.method.test_agreement import reference_kappa
from tests.qct2i.test_cli_import_dsg import _tifa160_questions
from tests.worlds.judges import write_judges_bundle

JUDGE_MARTS = ("+path:models/marts/judges", "+path:models/marts/failures")
DRAWS = 200
WORLD_VARS = (
    "--indirect-selection",
    "cautious",
    "--vars",
    f"{{judge_bootstrap_draws: {DRAWS}, judge_agreement_min_shared: 4}}",
)
IMAGES = ("m1/p1", "m1/p2", "m1/p3", "m2/p1", "m2/p2", "m2/p3")
# Zero-out scores by hand (tests/worlds/judges.py): a question passes when it and every ancestor
# answered yes; a missing answer fails.
ZERO_OUT = {
    # m1/p1 Y N Y: q3 sits under the failed q2 -> 1/3; m1/p3 N Y: q2 under a failed root -> 0;
    # m2/p2 (missing) Y N: the missing root counts 0 -> 1/3
    "default": (1 / 3, 1.0, 0.0, 2 / 3, 1 / 3, 1.0),
    # m1/p2 Y N Y: the diamond's q3 has the failed root q2 as a parent -> 1/3
    "j2": (1.0, 1 / 3, 0.0, 2 / 3, 2 / 3, 1.0),
}
HUMAN = (4.5, 5.0, 1.5, 3.0, 2.5, 4.5)  # mean ratings of the six images


@pytest.fixture(scope="module")
def judges_world(tmp_path_factory):
    root = tmp_path_factory.mktemp("judges_world")
    bundle = write_judges_bundle(root / "bundle")
    return build_warehouse(bundle, warehouse_in(root / "judges-wh"), JUDGE_MARTS, WORLD_VARS)


def _agreement(warehouse) -> dict[str, dict]:
    rows = query(
        warehouse,
        "select capability, judge_a, judge_b, n_shared, agreement_frac, kappa, kappa_ci_lo, "
        "kappa_ci_hi, reason, yes_rate_a, yes_rate_b from marts.fct_judge_agreement",
    )
    names = ("judge_a", "judge_b", "n_shared", "agreement_frac", "kappa", "kappa_ci_lo")
    names += ("kappa_ci_hi", "reason", "yes_rate_a", "yes_rate_b")
    return {row[0]: dict(zip(names, row[1:], strict=True)) for row in rows}


def test_failure_examples_list_every_judge_and_put_agreed_failures_first(judges_world):
    """The official judge's "no" on a valid question (tests/worlds/judges.py): m1 p1 q2 (j2 says
    yes), m1 p3 q1 (both no), m2 p1 q3 (both no); m2 p2 q3 is masked under a missing root."""
    rows = query(
        judges_world,
        "select model_id, capability, example_rank, prompt_id, question_id, judge_answers, "
        "n_judges_no, n_judges_answered from marts.fct_failure_examples order by all",
    )
    assert rows == [
        ("m1", "color", 1, "p1", "q2", "default: no; j2: yes", 1, 2),
        ("m1", "man_made", 1, "p3", "q1", "default: no; j2: no", 2, 2),
        ("m2", "texture", 1, "p1", "q3", "default: no; j2: no", 2, 2),
    ]


def test_judge_agreement_overall_by_hand(judges_world):
    rows = _agreement(judges_world)
    overall = rows["__all__"]
    assert (overall["judge_a"], overall["judge_b"]) == ("default", "j2")
    # 15 shared items (m2/p2/q1 is missing for `default`): 9 both yes, 2 default only, 1 j2 only,
    # 3 both no. p_o = 12/15; yes-rates 11/15, 10/15; p_e = (110 + 20) / 225 = 130/225;
    # kappa = (180 - 130) / (225 - 130) = 50/95
    assert overall["n_shared"] == 15
    assert overall["agreement_frac"] == pytest.approx(12 / 15)
    assert overall["yes_rate_a"] == pytest.approx(11 / 15)
    assert overall["yes_rate_b"] == pytest.approx(10 / 15)
    assert overall["kappa"] == pytest.approx(50 / 95)
    assert overall["kappa_ci_lo"] <= overall["kappa_ci_hi"]
    assert overall["reason"] is None


def test_judge_agreement_per_capability_and_the_minimum_rule(judges_world):
    rows = _agreement(judges_world)
    assert set(rows) == {"__all__", "animals", "color", "man_made", "spatial", "texture"}
    # color: p1/q2 (m1 no/yes, m2 yes/yes), p3/q2 (m1 yes/no, m2 yes/yes): p_o = 1/2,
    # yes-rates 3/4 and 3/4, p_e = 10/16: kappa = (8 - 10) / (16 - 10) = -1/3
    assert (rows["color"]["n_shared"], rows["color"]["agreement_frac"]) == (4, 0.5)
    assert rows["color"]["kappa"] == pytest.approx(-1 / 3)
    # man_made: p2/q2 (m1 yes/no, m2 yes/yes), p3/q1 (m1 no/no, m2 yes/yes): p_o = 3/4,
    # yes-rates 3/4 and 1/2, p_e = 3/8 + 1/8: kappa = (3/4 - 1/2) / (1/2) = 1/2
    assert rows["man_made"]["kappa"] == pytest.approx(0.5)
    # fewer than 4 shared items (the world's judge_agreement_min_shared): NULL kappa, a reason
    for capability, n_shared in (("animals", 3), ("spatial", 2), ("texture", 2)):
        row = rows[capability]
        assert row["n_shared"] == n_shared, capability
        assert row["kappa"] is None and row["kappa_ci_lo"] is None, capability
        assert f"fewer shared items ({n_shared})" in row["reason"], capability


def test_zero_out_image_scores_on_the_hand_dsg(judges_world):
    rows = query(
        judges_world,
        "select judge_id, model_id || '/' || prompt_id, judge_score, human_score, n_ratings "
        "from intermediate.int_judge_human_scores order by all",
    )
    got = {(judge, image): (score, human) for judge, image, score, human, _ in rows}
    want = {
        (judge, image): (score, human)
        for judge, scores in ZERO_OUT.items()
        for image, score, human in zip(IMAGES, scores, HUMAN, strict=True)
    }
    assert got.keys() == want.keys()
    for key, (score, human) in want.items():
        assert got[key][0] == pytest.approx(score), key
        assert got[key][1] == pytest.approx(human), key


def test_human_agreement_against_hand_and_scipy(judges_world):
    rows = query(
        judges_world,
        "select judge_id, n_images, spearman, kendall, spearman_ci_lo, spearman_ci_hi, "
        "kendall_ci_lo, kendall_ci_hi, ranking_spearman, ranking_matches, n_models, n_draws "
        "from marts.fct_human_agreement order by judge_id",
    )
    assert [r[0] for r in rows] == ["default", "j2"]
    for judge, n, rho, tau, s_lo, s_hi, k_lo, k_hi, ranking, matches, n_models, n_draws in rows:
        assert n == 6 and n_models == 2
        assert rho == pytest.approx(spearmanr(ZERO_OUT[judge], HUMAN).statistic), judge
        assert tau == pytest.approx(kendalltau(ZERO_OUT[judge], HUMAN).statistic), judge
        assert s_lo <= s_hi and k_lo <= k_hi
        assert 0 < n_draws <= DRAWS
        # both judges rank m2 first (means 2/3 > 4/9, 7/9 > 4/9), the humans m1 (11/3 > 10/3)
        assert ranking == pytest.approx(-1.0) and matches is False
    # `default` worked by hand: average ranks (2.5, 5.5, 1, 4, 2.5, 5.5) and (4.5, 6, 1, 3, 2, 4.5)
    assert rows[0][2] == pytest.approx(13.5 / math.sqrt(16.5 * 17))


def test_one_judge_without_ratings_builds_empty_marts(hand_published):
    """Guards against a judge pair or a human agreement made up where there is one judge and no
    rating: the hand bundle as the session built it (every mart; reading it spares a build of the
    same bundle)."""
    warehouse = hand_published
    for mart in ("fct_judge_agreement", "fct_human_agreement"):
        assert query(warehouse, f"select count(*) from marts.{mart}") == [(0,)], mart


# -- the real TIFA160 release: three judges, five generators, human Likert ratings ----------------


def test_tifa160_release_fills_the_judge_marts(tmp_path, dsg_1k_path):
    """import-dsg's bundle of the TIFA160 subset, then the judge marts: every judge pair's overall
    kappa against kappa computed straight from the answers CSVs (an independent route)."""
    answers = [require_test_data(ANSWERS / f"{j}_dsg.csv", f"{j} answers") for j in JUDGES]
    ratings = require_test_data(ANNS / "tifa160-likert-anns.csv", "TIFA160 Likert ratings")
    questions = tmp_path / "tifa160-anns.csv"
    _tifa160_questions(dsg_1k_path, questions)
    convert_release(questions, answers, tmp_path / "bundle", ratings)
    warehouse = build_warehouse(
        tmp_path / "bundle",
        warehouse_in(tmp_path / "tifa160-wh"),
        JUDGE_MARTS,
        ("--indirect-selection", "cautious", "--vars", "{official_judge: pali17b}"),
    )
    yes_no = {}  # judge -> {(model, item, question): 0/1}
    for judge, path in zip(JUDGES, answers, strict=True):
        rows = [r for r in csv_rows(path) if r["dsg_prompt_split"] == "tifa160"]
        yes_no[judge] = {
            (r["t2i_model"], r["item_id"], r["question_id"]): int(
                r["answer"].strip().lower() == "yes"
            )
            for r in rows
            if r["answer"].strip().lower() in ("yes", "no")
        }
    got = {
        (a, b): (n, kappa)
        for a, b, n, kappa in query(
            warehouse,
            "select judge_a, judge_b, n_shared, kappa from marts.fct_judge_agreement "
            "where capability = '__all__'",
        )
    }
    assert set(got) == {
        ("instructblip", "mplug"),
        ("instructblip", "pali17b"),
        ("mplug", "pali17b"),
    }
    for (a, b), (n, kappa) in got.items():
        shared = sorted(yes_no[a].keys() & yes_no[b].keys())
        assert n == len(shared)
        want = reference_kappa([yes_no[a][k] for k in shared], [yes_no[b][k] for k in shared])
        assert kappa == pytest.approx(want), (a, b)
    # every rated image the judges answered about (the release has no answers for one item)
    rated = {(r["t2i_model"], r["item_id"]) for r in csv_rows(ratings)}
    answered = {(m, item) for m, item, _ in yes_no["pali17b"]}
    humans = query(warehouse, "select judge_id, n_images, n_models from marts.fct_human_agreement")
    assert sorted(humans) == [(j, len(rated & answered), 5) for j in sorted(JUDGES)]
    boards = query(
        warehouse,
        "select judge_id, count(*), count(hcq_total) from marts.fct_hcq_leaderboard_by_judge "
        "where language_scope = 'en' group by 1 order by 1",
    )
    assert boards == [(j, 5, 5) for j in sorted(JUDGES)]
