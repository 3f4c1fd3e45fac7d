"""What `read_bundle` hands back and what `load_bundle` stores, on the hand-written good bundle
(tests/worlds/good_bundle.py): the `question_order` column's place and type, the line column
only when asked for, and the caller's taxonomy used by the load. Holes `make mutation` found
(issue 36): against the bundle tests under 0.3 s these changes survived. Expected values are
read off GOOD by hand."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from ingestion.bundle import LINE, load_bundle, read_bundle
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
    accepted (not checked against the seed's), and the rows reach the raw tables through the
    load's own connection: the counts and one stored question."""
    tables = good()
    tables["questions"][5]["capability"] = "ours_only"
    warehouse = tmp_path / "wh" / "w.duckdb"
    counts = load_bundle(write(tmp_path / "b", tables), warehouse, TAXONOMY | {"ours_only"})
    assert counts == GOOD_ROWS
    with duckdb.connect(str(warehouse), read_only=True) as con:
        stored = con.execute(
            "SELECT prompt_id, question_id FROM raw.questions WHERE capability = 'ours_only'"
        ).fetchall()
    assert stored == [("p3", "q1")]
