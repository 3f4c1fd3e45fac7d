"""Small parts of the bundle that every larger test passed over: `write_bundle`'s defaults, how a
refused value is shown, the lone-surrogate test, a lone `questions` file's refusals and the
append hint. Holes `make mutation` found (issue 36); every expected value is written by hand."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from ingestion.bundle import LINE, BundleError, Problem, read_questions_file
from ingestion.bundle.append import _replace_hint
from ingestion.bundle.format import TABLES, write_bundle
from ingestion.bundle.read import _holds_lone_surrogate, _show

GENERATOR = {"model_id": "m1", "display_name": "Mödel one"}


def test_write_bundle_writes_jsonl_by_default_into_a_folder_it_creates(tmp_path):
    """Guards the default format (`jsonl`, not something the format check refuses) and the
    parent folders made on the way (`parents=True`): the rows land in `a/b/generators.jsonl`,
    keyed by every contract column (unset ones null), non-ASCII kept as written."""
    folder = tmp_path / "a" / "b"
    written = write_bundle(folder, {"generators": [GENERATOR]})
    assert written == [folder / "generators.jsonl"]
    line = written[0].read_text(encoding="utf-8")
    assert line.endswith("\n") and line.count("\n") == 1
    assert "Mödel one" in line
    record = json.loads(line)
    assert (record["model_id"], record["display_name"]) == ("m1", "Mödel one")


def test_write_bundle_writes_parquet_with_the_contracts_types(tmp_path):
    """Guards the Parquet schema: the contract's (nullable string columns left unset stay
    strings), not the types pyarrow would infer from the rows (a null type for an all-null
    column)."""
    (written,) = write_bundle(tmp_path, {"generators": [GENERATOR]}, "parquet")
    assert written == tmp_path / "generators.parquet"
    assert pq.read_schema(written).remove_metadata() == TABLES["generators"].schema
    assert pq.read_table(written)["display_name"].to_pylist() == ["Mödel one"]


def test_write_bundle_names_an_unknown_format_and_the_known_ones(tmp_path):
    """Guards the refusal's message: the format asked for and the two it could have been."""
    expected = "unknown bundle format 'csv'; expected one of ('jsonl', 'parquet')"
    with pytest.raises(ValueError) as error:
        write_bundle(tmp_path, {"generators": [GENERATOR]}, "csv")
    assert str(error.value) == expected
    assert not (tmp_path / "generators.csv").exists()


def test_a_refused_value_is_shown_as_json_and_cut_after_57_characters():
    """Guards `_show`: JSON with non-ASCII kept (`"é"`, not `"\\u00e9"`), whole up to 60
    characters of JSON, and a longer one as its first 57 characters and `...`."""
    assert _show("é") == '"é"'
    assert _show(12) == "12"
    exactly_60 = "a" * 58  # with its two quotes, 60 characters of JSON
    assert _show(exactly_60) == '"' + exactly_60 + '"'
    assert _show("b" * 59) == '"' + "b" * 56 + "..."
    assert len(_show("b" * 59)) == 60


def test_a_lone_surrogate_is_told_apart_from_a_whole_pair():
    """Guards `_holds_lone_surrogate`: an escaped pair (an emoji) is a character UTF-8 holds, a
    lone half is not; a line holding only the pair must not be refused."""
    assert _holds_lone_surrogate(json.loads('{"text": "\\ud83d\\ude00"}')) is False
    assert _holds_lone_surrogate(json.loads('{"text": "a\\ud800b"}')) is True
    assert _holds_lone_surrogate({"text": "plain"}) is False


def test_a_questions_file_of_another_kind_is_refused_as_such(tmp_path):
    """Guards the reason for a file that exists but is neither JSONL nor Parquet (not "not
    found"), and the refused path kept on the error."""
    path = tmp_path / "questions.csv"
    path.write_text("prompt_id,question_id\n", encoding="utf-8")
    with pytest.raises(BundleError) as error:
        read_questions_file(path)
    assert error.value.folder == path
    assert error.value.problems == [
        Problem("questions.csv", None, "expected a .jsonl or .parquet file")
    ]


def test_an_empty_questions_file_is_refused_as_having_no_questions(tmp_path):
    """Guards the empty-file rule of a lone questions file: an empty `questions.jsonl` is one
    problem without a line, and the error keeps the path, rather than an empty table accepted."""
    path = tmp_path / "questions.jsonl"
    path.write_text("", encoding="utf-8")
    with pytest.raises(BundleError) as error:
        read_questions_file(path)
    assert error.value.folder == path
    assert error.value.problems == [Problem("questions.jsonl", None, "the file has no questions")]


def test_a_questions_file_of_one_question_is_read(tmp_path):
    """Guards the empty-file rule's count: one question is a file with questions; and the table
    comes back without the reader's line column (`_accepted_table`'s default)."""
    row = {"prompt_id": "p", "question_id": "q1", "text": "a dog?", "capability": "animals"}
    row["parents"] = []
    path = tmp_path / "questions.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    table = read_questions_file(path, {"animals"})
    assert table["question_id"].to_pylist() == ["q1"]
    assert LINE not in table.column_names


def test_the_append_hint_names_flags_only_where_a_slice_can_be_replaced():
    """The hint after a contradicting row: none for tables without a judge or a generator
    column (a hint there, even a placeholder, would name flags that replace nothing), both flags
    for judgments. Guards `_replace_hint`'s empty case."""
    assert _replace_hint("prompts") == ""
    assert _replace_hint("questions") == ""
    assert _replace_hint("judgments") == (
        "; pass --replace-model MODEL_ID or --replace-judge JUDGE_ID "
        "to replace that generator's or that judge's stored evidence"
    )


def test_a_questions_files_problems_are_listed_by_line_not_by_reason(tmp_path):
    """Guards the sort of a lone questions file's problems: by line first (a cycle found at line
    1 before a duplicate at line 3, though "duplicate" sorts before "questions")."""
    rows = [
        {"prompt_id": "p", "question_id": "q1", "text": "x", "capability": "c", "parents": ["q2"]},
        {"prompt_id": "p", "question_id": "q2", "text": "y", "capability": "c", "parents": ["q1"]},
        {"prompt_id": "p", "question_id": "q2", "text": "z", "capability": "c", "parents": []},
    ]
    path = tmp_path / "q.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    with pytest.raises(BundleError) as error:
        read_questions_file(path, {"c"})
    assert [(p.line, p.reason[:9]) for p in error.value.problems] == [
        (1, "questions"),
        (3, "duplicate"),
    ]
