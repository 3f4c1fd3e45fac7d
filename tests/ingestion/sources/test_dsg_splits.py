"""`qct2i import-dsg --split`: one prompt split of a DSG questions file (issue 15), e.g. the
TIFA160 subset of DSG-1k on which the release's five generators were all judged."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from ingestion.bundle import Problem
from ingestion.sources.dsg_release import DsgReleaseError, convert_release, item_split
from tests.helpers import require_test_data

PROJECT_ROOT = Path(__file__).resolve().parents[3]
DSG_DATA = PROJECT_ROOT.parent / "shared" / "data" / "dsg"


@pytest.mark.parametrize(
    ("item_id", "split"),
    [
        ("tifa160_12", "tifa160"),
        ("localized_narratives_7", "localized_narratives"),
        ("whoops_0", "whoops"),
        ("item", "item"),  # no number: the id is its own split
        ("v_2b", "v_2b"),
    ],
)
def test_the_split_of_an_item_is_its_id_less_the_trailing_number(item_id, split):
    assert item_split(item_id) == split


def _csv_rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_tifa160_split_keeps_its_prompts_and_the_five_generators_answers(tmp_path):
    data = require_test_data(DSG_DATA, "the DSG release")
    questions = data / "dsg" / "data" / "dsg-1k-anns.csv"
    answers = data / "vqa_answers_release" / "pali17b_dsg.csv"

    conversion = convert_release(questions, [answers], tmp_path / "b", splits=["tifa160"])

    # expected from the CSVs themselves, counted here by the csv module
    items = {r["item_id"] for r in _csv_rows(questions) if r["item_id"].startswith("tifa160_")}
    by_split = Counter(r["dsg_prompt_split"] for r in _csv_rows(answers))
    models = {r["t2i_model"] for r in _csv_rows(answers) if r["dsg_prompt_split"] == "tifa160"}
    assert conversion.counts["prompts"] == len(items) == 160
    assert len(models) == 5
    assert conversion.out_of_scope == sum(n for split, n in by_split.items() if split != "tifa160")
    dropped = sum(
        1 for row in conversion.dirty if row.action == "dropped" and row.file == answers.name
    )
    assert conversion.counts["judgments"] == by_split["tifa160"] - dropped


def test_a_split_the_questions_file_lacks_is_refused_naming_the_splits_it_has(tmp_path):
    questions = tmp_path / "anns.csv"
    questions.write_text(
        "item_id,text,keywords,proposition_id,dependency,category_broad,category_detailed,"
        "question_natural_language\n"
        "whoops_1,a dog,dog,1,0,entity,whole,Is there a dog?\n",
        encoding="utf-8",
    )

    with pytest.raises(DsgReleaseError) as refused:
        convert_release(questions, [], tmp_path / "b", splits=["tifa160"])

    assert refused.value.problems == [
        Problem("anns.csv", None, "no item of split 'tifa160' (it has whoops)")
    ]
    assert not (tmp_path / "b").exists()
