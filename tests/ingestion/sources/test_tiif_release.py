"""The TIIF-Bench converter (`ingestion.sources.tiif_release`) on a hand fixture in the release's
layout (our own invented prompts and questions, never the release's): the tables, target-yes,
the derived parents, the capabilities by rule, each dirty class with its file, line and reason,
strict mode; then `qct2i import-release` in-process for `tiif`, `dsg` and `oneig` (refused
without --questions-only)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from ingestion.bundle import read_bundle
from ingestion.bundle.load import default_capabilities
from ingestion.sources.attribution import word_forms
from ingestion.sources.release_common import REPORT_FILE
from ingestion.sources.tiif_questions import (
    concept_questions,
    existence_phrase,
    head_words,
    read_rules,
)
from ingestion.sources.tiif_release import (
    APPLIED_CLASSES,
    DIRTY_CLASSES,
    TiifReleaseError,
    convert_tiif,
)
from ingestion.store.warehouse import Warehouse
from tests.helpers import query, run_main
from tests.ingestion.sources.test_dsg_release import write_dsg_fixture

EVAL = "data/testmini_eval_prompts"
RESULTS = "eval-results/testmini_subset_eval_results"
JUDGES = ("GPT-4o", "QwenVL")
GENERATORS = ("gen-a", "gen-b")

PROMPTS = {
    "negation": [
        (
            "A bowl with no spoon in it.",
            "A wide bowl stands alone on a bench, and no spoon is in it.",
        ),
        ("A dog that is not asleep.", "A small dog on a rug, wide awake, its eyes open and alert."),
    ],
    "color+2d": [
        ("A green chair beside a blorp.", "A bright green chair, and a blorp to its left side."),
        ("Two orange cats.", "Two cats with orange fur sit together on a windowsill."),
    ],
}
# (questions, compliant answers); trailing spaces and a capital "No" as the release writes them
EVALS = {
    "negation": [
        (
            [
                "Is there a bowl in the image?  ",
                "Is there a spoon in the image?",
                "Is the spoon in the bowl?",
            ],
            ["yes", "no", "no"],
        ),
        (["Is there a dog in the image?", "Is the dog asleep?"], ["yes", "No"]),
    ],
    "color+2d": [
        (
            [
                "Is there a chair in the image?",
                "Is there a blorp in the image?",
                "Is the chair green?",
                "Is the blorp to the left of the chair?",
                "Can you see a sharp photo?",
            ],
            ["yes"] * 5,
        ),
        (["Are there cats in the image?", "Are the cats orange in color?"], ["yes", "yes"]),
    ],
}
# color+2d has the full test set's prompts file: testmini line 0 is its line 2, line 1 its line 0
TEST_ORDER = {"color+2d": [1, None, 0]}  # test line -> testmini line (None: not in testmini)
INDEX = {("negation", 0): 0, ("negation", 1): 1, ("color+2d", 0): 2, ("color+2d", 1): 0}
# Each generator's answers (the same for both judges and both forms unless a dirty case says)
PREDS = {
    ("gen-a", "negation", 0): ["yes", "no", "no"],  # complies
    ("gen-b", "negation", 0): ["yes", "yes", "yes"],  # a spoon, in the bowl
    ("gen-a", "negation", 1): ["yes", "no"],
    ("gen-b", "negation", 1): ["no", "yes"],
    ("gen-a", "color+2d", 0): ["yes"] * 5,
    ("gen-b", "color+2d", 0): ["yes", "no", "yes", "no", "yes"],
    ("gen-a", "color+2d", 1): ["yes", "yes"],
    ("gen-b", "color+2d", 1): ["yes", "no"],
}


def _path(judge: str, generator: str, dimension: str, form: str, name: str) -> str:
    return f"{RESULTS}/testmini_subset_eval_results_{judge}/{generator}/{dimension}/{form}/{name}"


def _result(dimension: str, line: int, form: str, preds) -> dict:
    questions, compliant = EVALS[dimension][line]
    return {
        "attribute": dimension,
        "desc": f"{form}_description",
        "jsonl_file": f"{dimension}_eval_prompts.jsonl",
        "line_idx": INDEX[(dimension, line)],
        "questions": questions,
        "gt_answers": compliant,
        "model_pred": preds,
        "model_output": "free text",
    }


def _jsonl(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def write_tiif_fixture(root: Path) -> Path:
    """The hand release: 2 dimensions x 2 prompts, 2 judges, 2 generators, one of each dirty
    class (marked below), as TIIF-Bench lays its files out."""
    for dimension, prompts in PROMPTS.items():
        rows = [
            {"type": dimension, "short_description": s, "long_description": lo} for s, lo in prompts
        ]
        _jsonl(root / "data/testmini_prompts" / f"{dimension}_prompts.jsonl", rows)
        evals = [
            {"type": dimension, "yn_question_list": q, "yn_answer_list": a}
            for q, a in EVALS[dimension]
        ]
        _jsonl(root / EVAL / f"{dimension}_eval_prompts.jsonl", evals)
    other = {"short_description": "Not in testmini.", "long_description": "Not in testmini."}
    tests = [_test_prompt(line) if line is not None else other for line in TEST_ORDER["color+2d"]]
    _jsonl(root / "data/test_prompts/color+2d_prompts.jsonl", tests)
    for judge in JUDGES:
        for (generator, dimension, line), preds in PREDS.items():
            for form in ("short", "long"):
                name = f"{INDEX[(dimension, line)]}.json"
                _jsonl(
                    root / _path(judge, generator, dimension, form, name),
                    [_result(dimension, line, form, preds)],
                )
    _dirty_cases(root)
    return root


def _test_prompt(line: int) -> dict:
    short, long = PROMPTS["color+2d"][line]
    return {"type": "color+2d", "short_description": short, "long_description": long}


def _dirty_cases(root: Path) -> None:
    def at(judge, generator, dimension, form, name) -> Path:
        return root / _path(judge, generator, dimension, form, name)

    # missing_result: QwenVL has no answer about gen-b's long prompt of negation line 1
    at("QwenVL", "gen-b", "negation", "long", "1.json").unlink()
    # unknown_result: test line 1 is not in testmini
    _jsonl(
        at("GPT-4o", "gen-a", "color+2d", "short", "1.json"),
        [_result("color+2d", 1, "short", ["yes"] * 2)],
    )
    # duplicate_result: 00.json beside 0.json (0.json, first by name, wins)
    _jsonl(
        at("GPT-4o", "gen-b", "negation", "short", "00.json"),
        [_result("negation", 0, "short", ["no"] * 3)],
    )
    # malformed_result
    at("QwenVL", "gen-a", "negation", "short", "1.json").write_text("{not json", encoding="utf-8")
    # result_mismatch: a long prompt's file that says it answers the short description
    _jsonl(
        at("QwenVL", "gen-a", "color+2d", "long", "0.json"),
        [_result("color+2d", 1, "short", ["yes"] * 2)],
    )
    # question_mismatch: one question reworded
    changed = _result("color+2d", 0, "long", ["yes"] * 5)
    changed["questions"] = [*changed["questions"][:4], "Is the photo blurred?"]
    _jsonl(at("GPT-4o", "gen-b", "color+2d", "long", "2.json"), [changed])
    # compliant_answer_mismatch: gt_answers that disagree with the eval prompt line
    contradicting = _result("negation", 0, "long", ["yes", "no", "no"])
    contradicting["gt_answers"] = ["yes", "yes", "no"]
    _jsonl(at("GPT-4o", "gen-a", "negation", "long", "0.json"), [contradicting])
    # answer_count_mismatch: one answer for two questions
    _jsonl(
        at("QwenVL", "gen-b", "color+2d", "short", "0.json"),
        [_result("color+2d", 1, "short", ["yes"])],
    )
    # answer_not_yes_no: "maybe" (and "Yes " with a space, which is a yes)
    _jsonl(
        at("GPT-4o", "gen-a", "negation", "short", "0.json"),
        [_result("negation", 0, "short", ["yes", "maybe", "Yes "])],
    )
    # entity_noun_unlisted: "blorp" is in no noun list (color+2d line 1, both prompts)


@pytest.fixture
def release(tmp_path) -> Path:
    return write_tiif_fixture(tmp_path / "tiif")


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- the tables --------------------------------------------------------------------------------


def test_prompts_and_questions_of_the_hand_release(release, tmp_path):
    conversion = convert_tiif(release, tmp_path / "bundle")
    prompts = _read(tmp_path / "bundle" / "prompts.jsonl")
    assert [(p["prompt_id"], p["concept_id"], p["source"], p["language"]) for p in prompts] == [
        ("tiif-color_2d-2-short", "tiif-color_2d-2", "tiif-testmini/color+2d", "en"),
        ("tiif-color_2d-2-long", "tiif-color_2d-2", "tiif-testmini/color+2d", "en"),
        ("tiif-color_2d-0-short", "tiif-color_2d-0", "tiif-testmini/color+2d", "en"),
        ("tiif-color_2d-0-long", "tiif-color_2d-0", "tiif-testmini/color+2d", "en"),
        ("tiif-negation-0-short", "tiif-negation-0", "tiif-testmini/negation", "en"),
        ("tiif-negation-0-long", "tiif-negation-0", "tiif-testmini/negation", "en"),
        ("tiif-negation-1-short", "tiif-negation-1", "tiif-testmini/negation", "en"),
        ("tiif-negation-1-long", "tiif-negation-1", "tiif-testmini/negation", "en"),
    ]
    assert prompts[1]["text"] == PROMPTS["color+2d"][0][1]
    questions = {
        (q["prompt_id"], q["question_id"]): q
        for q in _read(tmp_path / "bundle" / "questions.jsonl")
    }
    assert len(questions) == 2 * (5 + 2 + 3 + 2)
    assert questions[("tiif-negation-0-long", "q1")]["text"] == "Is there a bowl in the image?"
    # capability, parents, entity by the rules, worked by hand; the same under both prompts
    expected = {
        ("tiif-color_2d-2", "q1"): ("man_made", [], "chair"),  # existence, listed noun
        ("tiif-color_2d-2", "q2"): ("man_made", [], "blorp"),  # existence, unlisted: fallback
        ("tiif-color_2d-2", "q3"): ("color", ["q1"], None),  # color cue (a color predicate)
        ("tiif-color_2d-2", "q4"): ("spatial", ["q1", "q2"], None),  # 2d's cue: "left"
        ("tiif-color_2d-2", "q5"): ("color", [], None),  # no cue, no object: the dimension's
        ("tiif-color_2d-0", "q1"): ("animals", [], "cat"),  # "cats" read as cat
        ("tiif-color_2d-0", "q2"): ("color", ["q1"], None),
        ("tiif-negation-0", "q1"): ("man_made", [], "bowl"),
        ("tiif-negation-0", "q2"): ("logical_constraints", [], None),  # must be absent: no parent
        ("tiif-negation-0", "q3"): (
            "spatial",
            ["q1"],
            None,
        ),  # answered "no", not an absence: its predicate
        ("tiif-negation-1", "q1"): ("animals", [], "dog"),
        ("tiif-negation-1", "q2"): ("state", ["q1"], None),  # "asleep": a condition
    }
    for (concept, question_id), (capability, parents, entity) in expected.items():
        for form in ("short", "long"):
            q = questions[(f"{concept}-{form}", question_id)]
            assert (q["capability"], q["parents"], q["entity"]) == (capability, parents, entity)
            assert q["text_target"] is None
    # where each capability came from: a fallback is a default, never a rule
    sources = {key: q["capability_source"] for key, q in questions.items()}
    assert sources[("tiif-color_2d-2-short", "q1")] == "rule:entity_noun"
    assert sources[("tiif-color_2d-2-short", "q2")] == "default:entity_noun_unlisted"
    assert sources[("tiif-color_2d-2-short", "q5")] == "default:color+2d"
    assert sources[("tiif-negation-0-long", "q2")] == "rule:absence"
    assert sources[("tiif-negation-0-long", "q3")] == "rule:predicate_place"
    assert questions[("tiif-negation-0-long", "q3")]["compliant_answer"] == "no"
    assert questions[("tiif-color_2d-2-long", "q3")]["compliant_answer"] == "yes"
    # 24 questions: q2 and q5 of color+2d line 1, under both prompts, by a default
    assert "capabilities: 20 by a rule, 4 by a default (16.7 %)" in conversion.notes
    assert conversion.counts == {
        "prompts": 8,
        "questions": 24,
        "judgments": 85,
        "conversion_report": 11 + 6 + 12,
    }
    read = read_bundle(tmp_path / "bundle")  # the importer accepts it: parents acyclic, in-prompt
    assert read["judgments"].num_rows == 85


def test_judgments_are_target_yes_and_every_turned_question_is_counted(release, tmp_path):
    convert_tiif(release, tmp_path / "bundle")
    judgments = _read(tmp_path / "bundle" / "judgments.jsonl")
    assert Counter(j["judge_id"] for j in judgments) == {"GPT-4o": 43, "QwenVL": 42}
    assert all(j["judge_model"] == j["judge_id"] for j in judgments)
    assert {j["model_id"] for j in judgments} == set(GENERATORS)
    stored = {
        (j["judge_id"], j["model_id"], j["prompt_id"], j["question_id"]): j["answer"]
        for j in judgments
    }

    def answers(judge, generator, prompt):
        return [stored.get((judge, generator, prompt, f"q{k}")) for k in range(1, 4)]

    # gen-a shows no spoon: the judge said no, no, which a compliant image says: stored yes
    assert answers("QwenVL", "gen-a", "tiif-negation-0-long") == ["yes", "yes", "yes"]
    # gen-b shows a spoon in the bowl: the judge said yes, yes: stored no, no
    assert answers("QwenVL", "gen-b", "tiif-negation-0-short") == ["yes", "no", "no"]
    # "maybe" is a missing answer (never a "no"), "Yes " a yes, turned to no
    assert answers("GPT-4o", "gen-a", "tiif-negation-0-short") == ["yes", None, "no"]
    # the duplicate 00.json (all "no") lost to 0.json
    assert answers("GPT-4o", "gen-b", "tiif-negation-0-short") == ["yes", "no", "no"]
    # one answer for two questions: both missing
    assert answers("QwenVL", "gen-b", "tiif-color_2d-0-short")[:2] == [None, None]
    assert sum(j["answer"] is None for j in judgments) == 3
    report = _read(tmp_path / "bundle" / REPORT_FILE)
    turned = [r for r in report if r["dirty_class"] == "turned_to_target_yes"]
    # one row per bundle question whose compliant answer is no: negation 0 q2, q3; 1 q2; x2
    assert len(turned) == 6
    assert {(r["source_file"], r["line"]) for r in turned} == {
        (f"{EVAL}/negation_eval_prompts.jsonl", 1),
        (f"{EVAL}/negation_eval_prompts.jsonl", 2),
    }
    assert any(r["reason"].startswith("tiif-negation-1-long/q2: ") for r in turned)


def test_derived_parents_are_counted_edge_by_edge(release, tmp_path):
    conversion = convert_tiif(release, tmp_path / "bundle")
    assert set(conversion.applied_counts()) == set(APPLIED_CLASSES)
    derived = [r for r in conversion.applied if r.dirty_class == "derived_parent"]
    # per prompt: color_2d-2 q3<-q1, q4<-q1, q4<-q2; color_2d-0 q2<-q1; negation-0 q3<-q1;
    # negation-1 q2<-q1: 6 edges, 12 over both prompts of each concept
    assert len(derived) == 12
    assert {r.action for r in derived} == {"repaired"}
    reasons = {r.reason for r in derived}
    assert "tiif-color_2d-2-short/q4: parent q2, the existence of 'blorp'" in reasons
    assert "tiif-negation-0-long/q3: parent q1, the existence of 'bowl'" in reasons
    questions = _read(tmp_path / "bundle" / "questions.jsonl")
    assert sum(len(q["parents"]) for q in questions) == 12


def test_every_dirty_class_is_reported_with_its_file_line_and_reason(release, tmp_path):
    conversion = convert_tiif(release, tmp_path / "bundle")
    reported = {(r.file, r.line, r.dirty_class, r.action) for r in conversion.dirty}
    negation, color = f"{EVAL}/negation_eval_prompts.jsonl", f"{EVAL}/color+2d_eval_prompts.jsonl"
    # every result file's row is at line 1: (judge, generator, dimension, form, file), class
    in_results = [
        (("GPT-4o", "gen-a", "color+2d", "short", "1.json"), "unknown_result", "dropped"),
        (("GPT-4o", "gen-b", "negation", "short", "00.json"), "duplicate_result", "dropped"),
        (("QwenVL", "gen-a", "negation", "short", "1.json"), "malformed_result", "dropped"),
        (("QwenVL", "gen-a", "color+2d", "long", "0.json"), "result_mismatch", "dropped"),
        (("GPT-4o", "gen-b", "color+2d", "long", "2.json"), "question_mismatch", "dropped"),
        (
            ("GPT-4o", "gen-a", "negation", "long", "0.json"),
            "compliant_answer_mismatch",
            "repaired",
        ),
        (("QwenVL", "gen-b", "color+2d", "short", "0.json"), "answer_count_mismatch", "repaired"),
        (("GPT-4o", "gen-a", "negation", "short", "0.json"), "answer_not_yes_no", "repaired"),
    ]
    assert reported == {
        (negation, 2, "missing_result", "dropped"),
        (color, 1, "entity_noun_unlisted", "repaired"),
        *((_path(*place), 1, name, action) for place, name, action in in_results),
    }
    assert conversion.dirty_counts()["entity_noun_unlisted"] == 2  # both prompts of the concept
    assert set(conversion.dirty_counts()) == set(DIRTY_CLASSES)
    reasons = {r.dirty_class: r.reason for r in conversion.dirty}
    assert (
        "desc 'short_description' (its path says 'long_description')" in reasons["result_mismatch"]
    )
    assert "q2: answer 'maybe' is neither yes nor no" in reasons["answer_not_yes_no"]
    assert "QwenVL/gen-b/negation/long/1.json" in reasons["missing_result"]
    assert "noun 'blorp'" in reasons["entity_noun_unlisted"]
    report = _read(tmp_path / "bundle" / REPORT_FILE)
    assert Counter(r["dirty_class"] for r in report) == {
        **conversion.dirty_counts(),
        "turned_to_target_yes": 6,
        "derived_parent": 12,
    }
    assert read_bundle(tmp_path / "bundle")["conversion_report"].num_rows == 29


def test_strict_refuses_with_every_dirty_row_and_writes_nothing(release, tmp_path):
    out = tmp_path / "bundle"
    with pytest.raises(TiifReleaseError) as refused:
        convert_tiif(release, out, strict=True)
    assert len(refused.value.problems) == 11  # the dirty rows; turned answers and parents are rules
    message = str(refused.value)
    assert message.startswith("TIIF-Bench release refused (11 problems):")
    for where in (
        f"{EVAL}/negation_eval_prompts.jsonl:2: missing_result",
        f"{_path('QwenVL', 'gen-a', 'negation', 'short', '1.json')}:1: malformed_result",
        f"{EVAL}/color+2d_eval_prompts.jsonl:1: entity_noun_unlisted",
    ):
        assert where in message
    assert not out.exists()


def test_what_cannot_be_converted_is_refused_in_either_mode(release, tmp_path):
    unsafe = release / RESULTS / "testmini_subset_eval_results_QwenVL" / "gen c"
    shutil.copytree(release / RESULTS / "testmini_subset_eval_results_QwenVL" / "gen-a", unsafe)
    evals = release / EVAL / "negation_eval_prompts.jsonl"
    lines = evals.read_text(encoding="utf-8").splitlines()
    evals.write_text(lines[0].replace('"no", "no"]', '"no", "n/a"]') + "\n" + lines[1] + "\n")
    (release / "data/testmini_prompts/style_prompts.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(TiifReleaseError) as refused:
        convert_tiif(release, tmp_path / "bundle")
    message = str(refused.value)
    assert (
        "testmini_subset_eval_results_QwenVL/gen c: generator id 'gen c' is not a safe id"
        in message
    )
    assert f"{EVAL}/negation_eval_prompts.jsonl:1: a compliant answer" in message
    assert f"{EVAL}/style_eval_prompts.jsonl: no eval prompts for these prompts" in message
    assert not (tmp_path / "bundle").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("", encoding="utf-8")
    with pytest.raises(TiifReleaseError, match="output folder is not empty"):
        convert_tiif(write_tiif_fixture(tmp_path / "again"), tmp_path / "full")


def test_a_dimension_the_map_lacks_is_refused(release, tmp_path):
    seed = tmp_path / "map.csv"
    seed.write_text("dimension,capability,cue_capabilities\nnegation,logical_constraints,\n")
    with pytest.raises(
        TiifReleaseError, match=r"dimension 'color\+2d' is not in seeds/tiif_dimension_map"
    ):
        convert_tiif(release, tmp_path / "bundle", dimension_map=seed)


# -- the rules and their seeds -----------------------------------------------------------------


def test_the_seeds_name_only_capabilities_of_the_taxonomy():
    rules, problems = read_rules(default_capabilities())
    assert problems == []
    assert {"negation", "color+2d", "real_world", "text"} <= set(rules.dimensions)
    assert rules.nouns["teddy bear"] == "man_made" and rules.nouns["bear"] == "animals"


@pytest.mark.parametrize(
    ("question", "phrase", "head"),
    [
        ("Is there a red kite in the image?", "red kite", "kite"),
        ("Are there people sitting in the scene?", "people sitting", "people"),
        ("Is there a pair of green boots in the picture?", "pair of green boots", "boots"),
        (
            "Is there a smaller, older lamp in the room? Answer with yes or no.",
            "smaller, older lamp",
            "lamp",
        ),
        ("Does a wooden spoon exist in the image?", "wooden spoon", "spoon"),
        ("Does this object exist (kettle)?", "kettle", "kettle"),
        ("Is the kite red?", None, None),
        (
            "Is there snow on the roof?",
            None,
            None,
        ),  # the roof is no frame: not an existence question
    ],
)
def test_existence_questions_and_their_head_nouns(question, phrase, head):
    assert existence_phrase(question) == phrase
    if phrase is not None:
        assert head_words(phrase)[-1] == head


def test_plurals_meet_their_singulars():
    for plural, singular in (
        ("cups", "cup"),
        ("berries", "berry"),
        ("boxes", "box"),
        ("people", "person"),
    ):
        assert word_forms(plural) & word_forms(singular)
    assert not word_forms("cat") & word_forms("hat")


# -- `qct2i import-release`, in-process ----------------------------------------------------------


def test_import_release_tiif_reports_and_imports(release, tmp_path):
    warehouse = tmp_path / "w.duckdb"
    done = run_main(["import-release", "tiif", "--root", str(release)], warehouse)
    assert done.returncode == 0, done.stderr
    for name in DIRTY_CLASSES:
        assert f"{name}={2 if name == 'entity_noun_unlisted' else 1}" in done.stdout
    assert "rules applied: derived_parent=12, turned_to_target_yes=6" in done.stdout
    assert f"  e.g. {EVAL}/negation_eval_prompts.jsonl:2: missing_result: " in done.stdout
    working = Warehouse(warehouse).working
    assert query(working, "select judge_id, count(*) from raw.judgments group by 1 order by 1") == [
        ("GPT-4o", 43),
        ("QwenVL", 42),
    ]
    assert query(working, "select count(*) from raw.judgments where answer is null") == [(3,)]
    assert query(working, "select count(*) from raw.conversion_report") == [(29,)]


def test_a_build_whose_official_judge_has_no_judgments_says_which_judges_there_are(
    release, tmp_path
):
    """A release names its judges, so the default official judge (`default`) has none: `qct2i
    build` says so before dbt runs, with the judges the warehouse holds, and publishes nothing;
    a misspelt --official-judge is told the same way."""
    warehouse = tmp_path / "w.duckdb"
    assert run_main(["import-release", "tiif", "--root", str(release)], warehouse).returncode == 0
    working = Warehouse(warehouse).working
    before = working.read_bytes()
    refused = run_main(["build"], warehouse)
    assert refused.returncode == 2
    assert refused.stderr == (
        "the official judge 'default' (no --official-judge: the judge of a bundle naming none) "
        "has no judgments in this warehouse, which holds the judgments of GPT-4o, QwenVL: pick "
        "one with `qct2i build --official-judge GPT-4o`. Nothing was built.\n"
    )
    misspelt = run_main(["build", "--official-judge", "GPT4o"], warehouse)
    assert misspelt.returncode == 2
    assert misspelt.stderr.startswith("the official judge 'GPT4o' (--official-judge) has no ")
    assert not warehouse.exists()  # nothing published
    assert working.read_bytes() == before  # and the working copy untouched


def test_import_release_strict_and_oneig_are_refused(release, tmp_path):
    warehouse = tmp_path / "w.duckdb"
    refused = run_main(["import-release", "tiif", "--root", str(release), "--strict"], warehouse)
    assert refused.returncode == 2
    assert "gen-b/negation/short/00.json:1: duplicate_result" in refused.stderr
    oneig = run_main(["import-release", "oneig", "--root", str(release)], warehouse)
    assert oneig.returncode == 2  # a release without answers (tests/.../test_oneig_release.py)
    assert "OneIG-Bench ships questions but no answers" in oneig.stderr
    assert not warehouse.exists() and not Warehouse(warehouse).working.exists()


def test_import_release_dsg_reads_a_folder_laid_out_as_the_release(tmp_path):
    questions, answers = write_dsg_fixture(tmp_path)
    root = tmp_path / "DSG"
    (root / "dsg" / "data").mkdir(parents=True)
    (root / "vqa_answers_release").mkdir()
    shutil.copy(questions, root / "dsg" / "data" / "dsg-1k-anns.csv")
    shutil.copy(answers, root / "vqa_answers_release" / answers.name)
    warehouse = tmp_path / "w.duckdb"
    done = run_main(["import-release", "dsg", "--root", str(root)], warehouse)
    assert done.returncode == 0, done.stderr
    # the hand DSG fixture's counts (tests/ingestion/sources/test_dsg_release.py marks each line)
    for name, count in (("parent_in_words", 1), ("cycle", 1), ("answer_not_yes_no", 2)):
        assert f"{name}={count}" in done.stdout
    working = Warehouse(warehouse).working
    assert query(working, "select distinct judge_id from raw.judgments") == [("j1",)]
    assert query(working, "select count(*) from raw.judgments") == [(5,)]
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = run_main(["import-release", "dsg", "--root", str(empty)], tmp_path / "w2.duckdb")
    assert missing.returncode == 2 and "no DSG questions file here" in missing.stderr


def test_a_quoted_string_is_the_text_target_of_a_text_rendering_question():
    rules, _ = read_rules(default_capabilities())
    texts = ["Is the text 'OPEN' in the image?", "Does the sign read 'A' and 'B'?"]
    text, two = concept_questions("text", texts, ["yes", "yes"], rules)
    assert (text.capability, text.text_target) == ("text_rendering", "OPEN")
    assert (two.capability, two.text_target) == ("text_rendering", None)  # which one: unknown
    (design,) = concept_questions(
        "real_world", ["Can you tell the layout is balanced?"], ["yes"], rules
    )
    assert (design.capability, design.rule) == ("scientific_cultural_knowledge", "dimension")
