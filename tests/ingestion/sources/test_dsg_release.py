"""The DSG release converter (`ingestion.sources.dsg_release`): each dirty-row rule on a hand
fixture, the category map's coverage, and the real DSG-1k release against independent counts."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest

from ingestion.bundle import read_bundle
from ingestion.bundle.format import TABLES
from ingestion.paths import PROJECT_ROOT
from ingestion.sources.dsg_release import (
    DIRTY_CLASSES,
    REPORT_FILE,
    DsgReleaseError,
    category_key,
    convert_release,
    read_category_map,
)
from tests.helpers import require_test_data
from tests.worlds.dsg import load_dsg

DSG_DATA = PROJECT_ROOT.parent / "shared" / "data" / "dsg"
ANNS = DSG_DATA / "dsg" / "data"
ANSWERS = DSG_DATA / "vqa_answers_release"
JUDGES = ("pali17b", "mplug", "instructblip")

HEADER = (
    "item_id,text,keywords,proposition_id,dependency,category_broad,category_detailed,"
    "tuple,question_natural_language\n"
)
# Line numbers (header = line 1) are written beside each row; they are what the reports must say.
QUESTIONS = HEADER + (
    "a,A red cup.,cup,1,0,entity,whole,t,Is there a cup?\n"  # 2
    'a,A red cup.,"cup, red",2,"1, right",attribute,color,t,Is the cup red?\n'  # 3: word
    "a,A red cup.,cup,3,3,attribute,shape,t,Is the cup round?\n"  # 4: self-loop
    "a,A red cup.,cup,4,9,attribute,material,t,Is the cup glass?\n"  # 5: missing parent
    "b,A dog.,dog,1,2,entity,whole,t,Is there a dog?\n"  # 6: edge 2 -> 1 kept
    "b,A dog.,dog,2,1,global, ,t,Is it a photo?\n"  # 7: edge 1 -> 2 closes a cycle
    "b,A dog.,dog,2,0,global,-,t,Is it a drawing?\n"  # 8: repeats question 2
)
ANSWER_HEADER = (
    "dsg_prompt_split,qg_model,t2i_model,item_id,question,question_id,dependency_id,answer\n"
)
ANSWERS_CSV = ANSWER_HEADER + (
    "s,dsg,m1,a,Q,1,0,yes\n"  # 2
    "s,dsg,m1,a,Q,2,1,No \n"  # 3: "no" after trimming
    's,dsg,m1,a,Q,3,0,"yes\n<junk"\n'  # 4-5: one row over two lines, neither yes nor no
    "s,dsg,m1,a,Q,4,0,unanswerable\n"  # 6
    "s,dsg,m1,a,Q,9,0,yes\n"  # 7: no question 9
    "s,dsg,m1,a,Q,1,0,no\n"  # 8: second answer to a/q1
    "s,dsg,m1,b,Q,1,0,yes\n"  # 9
    "other,dsg,m1,zz,Q,1,0,yes\n"  # 10: a split the questions file lacks: out of scope
)


def write_dsg_fixture(tmp_path: Path) -> tuple[Path, Path]:
    questions = tmp_path / "hand-anns.csv"
    questions.write_text(QUESTIONS, encoding="utf-8")
    answers = tmp_path / "j1_dsg.csv"
    answers.write_text(ANSWERS_CSV, encoding="utf-8")
    return questions, answers


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_dirty_row_rule_on_a_hand_fixture(tmp_path):
    questions, answers = write_dsg_fixture(tmp_path)
    conversion = convert_release(questions, [answers], tmp_path / "bundle")
    reported = {(row.file, row.line, row.dirty_class, row.action) for row in conversion.dirty}
    assert reported == {
        ("hand-anns.csv", 3, "parent_in_words", "repaired"),
        ("hand-anns.csv", 4, "self_loop", "repaired"),
        ("hand-anns.csv", 5, "missing_parent", "repaired"),
        ("hand-anns.csv", 7, "cycle", "repaired"),
        ("hand-anns.csv", 8, "duplicate_question", "dropped"),
        ("j1_dsg.csv", 4, "answer_not_yes_no", "repaired"),
        ("j1_dsg.csv", 6, "answer_not_yes_no", "repaired"),
        ("j1_dsg.csv", 7, "unknown_question", "dropped"),
        ("j1_dsg.csv", 8, "duplicate_answer", "dropped"),
    }
    assert conversion.out_of_scope == 1
    bundle = tmp_path / "bundle"
    parents = {
        (q["prompt_id"], q["question_id"]): q["parents"] for q in _jsonl(bundle / "questions.jsonl")
    }
    assert parents == {
        ("a", "q1"): [],
        ("a", "q2"): ["q1"],
        ("a", "q3"): [],
        ("a", "q4"): [],
        ("b", "q1"): ["q2"],
        ("b", "q2"): [],
    }
    sources = {
        (q["prompt_id"], q["question_id"]): q["capability_source"]
        for q in _jsonl(bundle / "questions.jsonl")
    }
    # DSG's own category is the label (mapped by seeds/dsg_category_map.csv), never a rule's
    assert sources[("a", "q1")] == "release:entity/whole"
    assert sources[("a", "q2")] == "release:attribute/color"
    assert "capabilities: 6 the release's own label, 0 by a default (0.0 %)" in conversion.notes
    answers_of = {
        (j["prompt_id"], j["question_id"]): j["answer"] for j in _jsonl(bundle / "judgments.jsonl")
    }
    # unparseable answers are missing judgments (null), never "no"
    assert answers_of == {
        ("a", "q1"): "yes",
        ("a", "q2"): "no",
        ("a", "q3"): None,
        ("a", "q4"): None,
        ("b", "q1"): "yes",
    }
    assert {j["judge_id"] for j in _jsonl(bundle / "judgments.jsonl")} == {"j1"}
    prompts = _jsonl(bundle / "prompts.jsonl")
    assert [(p["prompt_id"], p["language"], p["source"]) for p in prompts] == [
        ("a", "en", "hand-anns"),
        ("b", "en", "hand-anns"),
    ]
    report = _jsonl(bundle / REPORT_FILE)
    assert len(report) == 9 and {r["dirty_class"] for r in report} <= set(DIRTY_CLASSES)
    read = read_bundle(bundle)  # the importer accepts it, the report as a bundle table
    assert read["judgments"].num_rows == 5
    assert read["conversion_report"].num_rows == 9


def test_strict_refuses_with_every_problem_and_writes_nothing(tmp_path):
    questions, answers = write_dsg_fixture(tmp_path)
    out = tmp_path / "bundle"
    with pytest.raises(DsgReleaseError) as refused:
        convert_release(questions, [answers], out, strict=True)
    assert len(refused.value.problems) == 9
    message = str(refused.value)
    for where in (
        "hand-anns.csv:3: parent_in_words",
        "hand-anns.csv:7: cycle",
        "j1_dsg.csv:6: answer_not_yes_no",
    ):
        assert where in message
    assert not out.exists()


def test_a_missing_column_and_an_unmapped_category_are_refused(tmp_path):
    questions, answers = write_dsg_fixture(tmp_path)
    questions.write_text(QUESTIONS.replace("attribute,shape", "attribute,smell"), encoding="utf-8")
    with pytest.raises(DsgReleaseError, match=r"hand-anns.csv:4: category attribute/smell"):
        convert_release(questions, [answers], tmp_path / "b1")
    answers.write_text(ANSWERS_CSV.replace(",answer\n", ",reply\n", 1), encoding="utf-8")
    with pytest.raises(DsgReleaseError, match=r"j1_dsg.csv:1: missing column\(s\) answer"):
        convert_release(questions, [answers], tmp_path / "b2")


def test_every_detailed_category_of_the_release_is_mapped_to_a_capability():
    capabilities = {
        row["capability"]
        for row in csv.DictReader((PROJECT_ROOT / "seeds" / "capabilities.csv").open())
    }
    mapping = read_category_map()
    assert set(mapping.values()) <= capabilities
    for name in ("dsg-1k-anns.csv", "tifa160-dev-anns.csv"):
        path = require_test_data(ANNS / name, f"DSG {name}")
        with path.open(newline="", encoding="utf-8") as handle:
            pairs = {
                category_key(r["category_broad"], r["category_detailed"])
                for r in csv.DictReader(handle)
            }
        assert pairs - set(mapping) == set(), name
    assert "ratings" in TABLES  # CONTRACTS "Additions": convert_release writes it


RATINGS_CSV = (
    "dsg_prompt_split,t2i_model,item_id,source_id,worker_id,question,answer\n"
    "s,m1,a,src,w1,Q,4\n"  # 2
    "s,m1,a,src,w2,Q, 5 \n"  # 3: 5 after trimming
    "s,m1,a,src,w1,Q,3\n"  # 4: second rating of w1 for m1/a
    "s,m1,b,src,w1,Q,6\n"  # 5: off the 1-5 scale
    "s,m1,b,src,w2,Q,n/a\n"  # 6: not a number
    "s,m1,zz,src,w1,Q,2\n"  # 7: an item the questions file lacks
    "other,m1,yy,src,w1,Q,3\n"  # 8: a split the questions file lacks: out of scope
    "s,m2,b,src,w1,Q,2.0\n"  # 9: 2 written as a decimal
    "s,m1,b,src,w3,Q,2.5\n"  # 10: between two points of the scale
)


def test_ratings_become_the_ratings_table_with_dirty_rows_reported(tmp_path):
    questions, answers = write_dsg_fixture(tmp_path)
    ratings = tmp_path / "hand-likert-anns.csv"
    ratings.write_text(RATINGS_CSV, encoding="utf-8")
    conversion = convert_release(questions, [answers], tmp_path / "bundle", ratings)
    reported = {
        (row.file, row.line, row.dirty_class, row.action)
        for row in conversion.dirty
        if row.file == ratings.name
    }
    assert reported == {
        ("hand-likert-anns.csv", 4, "duplicate_rating", "dropped"),
        ("hand-likert-anns.csv", 5, "rating_not_on_scale", "dropped"),
        ("hand-likert-anns.csv", 6, "rating_not_on_scale", "dropped"),
        ("hand-likert-anns.csv", 7, "unknown_rated_item", "dropped"),
        ("hand-likert-anns.csv", 10, "rating_not_on_scale", "dropped"),
    }
    assert conversion.out_of_scope == 1 + 1  # one answers row, one ratings row
    assert conversion.counts["ratings"] == 3
    stored = _jsonl(tmp_path / "bundle" / "ratings.jsonl")
    assert stored == [
        {
            "prompt_id": "a",
            "model_id": "m1",
            "rater_id": "w1",
            "rating": 4.0,
            "scale": "likert_1_5",
        },
        {
            "prompt_id": "a",
            "model_id": "m1",
            "rater_id": "w2",
            "rating": 5.0,
            "scale": "likert_1_5",
        },
        {
            "prompt_id": "b",
            "model_id": "m2",
            "rater_id": "w1",
            "rating": 2.0,
            "scale": "likert_1_5",
        },
    ]
    assert read_bundle(tmp_path / "bundle")["ratings"].num_rows == 3  # the importer accepts it
    with pytest.raises(DsgReleaseError) as refused:
        convert_release(questions, [answers], tmp_path / "strict", ratings, strict=True)
    assert "hand-likert-anns.csv:5: rating_not_on_scale" in str(refused.value)
    assert not (tmp_path / "strict").exists()


# -- the real release, against counts taken straight from the CSVs ------------------------------


def csv_rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _independent_parent_counts(rows: list[dict]) -> Counter:
    """Words, self-loops and missing parents, counted per token straight from the CSV."""
    counts: Counter = Counter()
    ids_of: dict[str, set[str]] = {}
    for row in rows:
        ids_of.setdefault(row["item_id"], set()).add(row["proposition_id"])
    for row in rows:
        for token in [t.strip() for t in row["dependency"].split(",")]:
            if not token.isdigit():
                counts["parent_in_words"] += 1
            elif token != "0" and token == row["proposition_id"]:
                counts["self_loop"] += 1
            elif token != "0" and token not in ids_of[row["item_id"]]:
                counts["missing_parent"] += 1
    return counts


def _not_yes_no(path: Path) -> int:
    return sum(r["answer"].strip().lower() not in ("yes", "no") for r in csv_rows(path))


def test_dsg_1k_with_the_sd2dot1_answers_reports_every_dirty_class(tmp_path, dsg_1k_path):
    answers = require_test_data(ANSWERS / "pali17b_dsg.csv", "DSG pali17b answers")
    sd2dot1 = tmp_path / "pali17b_dsg.csv"
    rows = [r for r in csv_rows(answers) if r["t2i_model"] == "sd2dot1"]
    with sd2dot1.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    conversion = convert_release(dsg_1k_path, [sd2dot1], tmp_path / "bundle")
    counts = conversion.dirty_counts()
    questions = csv_rows(dsg_1k_path)
    expected = _independent_parent_counts(questions)
    for name in ("parent_in_words", "self_loop", "missing_parent"):
        assert counts[name] == expected[name] > 0, name
    assert counts["answer_not_yes_no"] == _not_yes_no(sd2dot1) > 0
    # cycles: the test world's loader breaks them by the same stated rule, in code of its own
    assert counts["cycle"] == load_dsg(dsg_1k_path).repairs["cycle_edge"] > 0
    assert conversion.counts == {
        "prompts": len({r["item_id"] for r in questions}),
        "questions": len(questions),
        "judgments": len(rows),
        "conversion_report": sum(counts.values()),
    }
    report = _jsonl(tmp_path / "bundle" / REPORT_FILE)
    assert Counter(r["dirty_class"] for r in report) == counts
