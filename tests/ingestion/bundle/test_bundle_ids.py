"""Ids in an evidence bundle (issue 12): an id that could escape a folder or make a bad file name
is refused (ids may name image files), safe ids up to 128 characters are accepted, every id of the
real DSG release is safe, and a refusal shows an id's control characters escaped.

Expected lines are positions in the lists of GOOD (tests/worlds/good_bundle.py), counted from 1.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from ingestion.bundle import read_bundle
from ingestion.bundle.format import is_safe_id
from tests.helpers import require_test_data
from tests.worlds.good_bundle import (
    TAXONOMY,
    assert_problem,
    good,
    the_problem,
    with_value,
    write,
)

PROJECT_ROOT = Path(__file__).resolve().parents[3]
DSG_DATA = PROJECT_ROOT.parent / "shared" / "data" / "dsg"


# ------------------------------------------------------------------------------------------------
# Ids
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad_id",
    ["..", "../../etc/passwd", "a..b", ".hidden", "-rf", "/abs", "C:evil", "a/b", "a b", " a", "é"],
)
def test_every_unsafe_id_is_refused(tmp_path, bad_id):
    with_value("images", 2, "image_id", bad_id)(tmp_path)

    problem = the_problem(tmp_path)

    assert_problem(problem, "images.jsonl", 2, "is not a safe id")
    assert json.dumps(bad_id, ensure_ascii=False) in problem.reason  # the id, quoted as JSON


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_ids_up_to_128_safe_characters_are_accepted(tmp_path, fmt):
    longest, odd = "i" * 128, "0.v2_a-b"
    tables = good()
    tables["images"][0]["image_id"], tables["images"][1]["image_id"] = longest, odd

    images = read_bundle(write(tmp_path, tables, fmt), TAXONOMY)["images"]

    assert images["image_id"].to_pylist()[:2] == [longest, odd]


def test_every_id_of_the_dsg_release_is_safe():
    """The real third-party ids the project imports (DSG-1k, TIFA160, the VQA answers) pass."""
    require_test_data(DSG_DATA, "DSG release data")
    id_columns = ("item_id", "question_id", "proposition_id", "t2i_model", "source_id", "worker_id")
    unsafe = set()
    for path in sorted(DSG_DATA.rglob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                unsafe |= {
                    (path.name, c, row[c])
                    for c in id_columns
                    if c in row and not is_safe_id(row[c])
                }
    assert not unsafe, sorted(unsafe)[:10]


# ------------------------------------------------------------------------------------------------
# Control characters: shown escaped in a reason
# ------------------------------------------------------------------------------------------------


def test_reasons_never_hold_raw_control_characters(tmp_path):
    """An id with a NUL or a line break is shown escaped, so a terminal shows what is there."""
    with_value("images", 2, "image_id", "i\n2\x00")(tmp_path)

    problem = the_problem(tmp_path)

    assert not re.search(r"[\x00-\x1f]", problem.reason), repr(problem.reason)
    assert '"i\\n2\\u0000"' in problem.reason


def test_two_dots_anywhere_make_an_id_unsafe_by_the_rule_itself():
    """`is_safe_id` alone refuses '..' inside an id that the pattern allows (mutation testing,
    issue 36: the refusal above also comes from elsewhere, so the rule's own '..' test survived)."""
    assert is_safe_id("a.b") and is_safe_id("a_b-c.d")
    assert not is_safe_id("a..b") and not is_safe_id("x..")
