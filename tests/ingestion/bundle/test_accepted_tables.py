"""What `read_bundle` hands back and what `load_bundle` stores, on the hand-written good bundle
(tests/worlds/good_bundle.py): the `question_order` column's place and type, the line column
only when asked for, and the caller's taxonomy used by the load. Holes `make mutation` found
(issue 36): against the bundle tests under 0.3 s these changes survived. Expected values are
read off GOOD by hand."""

from __future__ import annotations

import hashlib
import json

import duckdb
import pyarrow as pa
import pytest

from ingestion.bundle import LINE, BundleError, Problem, load_bundle, read_bundle
from ingestion.bundle import load as bundle_load
from ingestion.bundle.format import TABLES
from ingestion.bundle.load import _problem_order, read_questions_file
from ingestion.bundle.manifest import MANIFEST_FORMAT, file_sha256
from ingestion.bundle.problems import COMMAND_LINE
from ingestion.bundle.read import ReadTable
from tests.worlds.good_bundle import GOOD_ROWS, TAXONOMY, good, write


def test_question_order_follows_question_id_as_a_required_integer(tmp_path):
    """Guards `_accepted_table`: `question_order` right after `question_id` (not one before or
    two after), int64 and not nullable; p1's questions are lines 1, 2, 4 (orders 1, 2, 3),
    p2's lines 3 and 5; and no line column unless asked for."""
    tables = read_bundle(write(tmp_path, good()), TAXONOMY)
    questions = tables["questions"]
    names = questions.column_names
    assert names[names.index("question_id") + 1] == "question_order"
    assert questions.schema.field("question_order") == pa.field(
        "question_order", pa.int64(), nullable=False
    )
    assert questions["question_order"].to_pylist() == [1, 2, 1, 3, 2, 1]
    assert all(LINE not in table.column_names for table in tables.values())


def test_lines_are_a_last_required_column_when_asked_for(tmp_path):
    """Guards `with_lines`: the line column, named `_line`, int64, not nullable, last, holding
    each row's 1-based line."""
    tables = read_bundle(write(tmp_path, good()), TAXONOMY, with_lines=True)
    judgments = tables["judgments"]
    assert judgments.schema.field(judgments.num_columns - 1) == pa.field(
        LINE, pa.int64(), nullable=False
    )
    assert judgments[LINE].to_pylist() == list(range(1, 10))


def test_a_load_checks_capabilities_against_the_callers_taxonomy(tmp_path):
    """Guards `load_bundle`'s arguments: a capability only the caller's taxonomy holds is
    accepted (not checked against the seed's), an image under the caller's image root is
    accepted (the roots handed on), and the rows reach the raw tables through the load's own
    connection: the counts and one stored question."""
    root = tmp_path.resolve() / "elsewhere"
    root.mkdir()
    tables = good()
    tables["questions"][5]["capability"] = "ours_only"
    tables["images"][0]["path"] = str(root / "i1.png")
    warehouse = tmp_path / "wh" / "w.duckdb"
    counts = load_bundle(write(tmp_path / "b", tables), warehouse, TAXONOMY | {"ours_only"}, [root])
    assert counts == GOOD_ROWS
    with duckdb.connect(str(warehouse), read_only=True) as con:
        stored = con.execute(
            "SELECT prompt_id, question_id FROM raw.questions WHERE capability = 'ours_only'"
        ).fetchall()
    assert stored == [("p3", "q1")]


def test_a_release_whose_file_is_not_the_one_listed_is_refused_before_reading(tmp_path):
    """Guards `read_bundle`'s manifest step: a file changed since its release is one problem
    naming the file (no line), and the error keeps the folder."""
    folder = write(tmp_path, good())
    listed = {
        path.name: {"table": path.stem, "rows": 1, "sha256": file_sha256(path)}
        for path in folder.glob("*.jsonl")
    }
    listed["prompts.jsonl"]["sha256"] = "0" * 64
    manifest = {"format": MANIFEST_FORMAT, "files": listed}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(BundleError) as refused:
        read_bundle(folder, TAXONOMY)
    assert refused.value.folder == folder
    assert [(p.file, p.line) for p in refused.value.problems] == [("prompts.jsonl", None)]
    actual = hashlib.sha256((folder / "prompts.jsonl").read_bytes()).hexdigest()
    assert refused.value.problems[0].reason == (
        f"changed since the release was written: SHA-256 expected {'0' * 64} (manifest.json), "
        f"actual {actual}"
    )


def test_problems_are_ordered_command_line_first_then_by_table_and_line(tmp_path):
    """Guards `_problem_order`: an image root that is not a folder (the command line's problem)
    before any table's; then tables in contract order; within a table by line, not by reason
    (line 2's "language ..." before line 3's "duplicate ...")."""
    tables = good()
    tables["prompts"][1]["language"] = "not a code"
    tables["prompts"][2]["prompt_id"] = "p1"
    folder = write(tmp_path / "b", tables)
    with pytest.raises(BundleError) as refused:
        read_bundle(folder, TAXONOMY, image_roots=[tmp_path / "no such folder"])
    problems = refused.value.problems
    assert problems[0].file == COMMAND_LINE
    prompts = [(p.line, p.reason.split()[0]) for p in problems if p.file == "prompts.jsonl"]
    assert prompts[:2] == [(2, "language"), (3, "duplicate")]
    assert problems.index(Problem(COMMAND_LINE, None, problems[0].reason)) == 0


def test_without_a_taxonomy_the_seeds_is_used(tmp_path):
    """Guards `read_bundle`'s default: no taxonomy given means the seed's (seeds/capabilities.csv,
    which lists `lighting`), not none at all: a `lighting` question is accepted, an unknown
    capability refused by name."""
    tables = good()
    tables["questions"][5]["capability"] = "lighting"
    assert read_bundle(write(tmp_path / "a", tables))["questions"].num_rows == 6
    tables["questions"][5]["capability"] = "not_a_capability"
    with pytest.raises(BundleError) as refused:
        read_bundle(write(tmp_path / "b", tables))
    assert [p.reason for p in refused.value.problems] == [
        "unknown capability 'not_a_capability' (not in the taxonomy)"
    ]


def test_a_tables_problem_without_a_line_comes_before_its_first_line():
    """Guards `_problem_order`'s line for a problem without one: 0, before line 1 whatever the
    reasons (not 1, which would order it among line 1's problems by reason)."""
    lined = Problem("prompts.jsonl", 1, "a reason on line 1")
    whole_file = Problem("prompts", None, "z: about the whole file")
    assert sorted([lined, whole_file], key=_problem_order) == [whole_file, lined]


def test_a_questions_files_problem_without_a_line_comes_before_line_1(tmp_path, monkeypatch):
    """Guards against load.read_questions_file_92 (`p.line or 1`: a line-less problem sorted as
    line 1, after a line-1 problem whose reason sorts first). Such a pair comes only from a
    Parquet file both non-UTF-8 and otherwise corrupt, so the reader's answer is stood in for."""
    problems = [Problem("q.jsonl", 1, "a: on line 1"), Problem("q.jsonl", None, "z: the file")]
    unusable = ReadTable(TABLES["questions"], "q.jsonl", pa.table({}), False, problems)
    monkeypatch.setattr(bundle_load, "read_jsonl", lambda path, spec: unusable)
    (tmp_path / "q.jsonl").write_bytes(b"")

    with pytest.raises(BundleError) as refused:
        read_questions_file(tmp_path / "q.jsonl", TAXONOMY)

    assert [p.line for p in refused.value.problems] == [None, 1]
