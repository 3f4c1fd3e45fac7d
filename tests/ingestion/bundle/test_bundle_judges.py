"""The judge of a judgment (CONTRACTS "Additions": `judge_id` (default `default`), `judge_model`,
`judge_revision`, `prompt_template_sha`) as the bundle reader and the replacing import see it.

Expected values are written out by hand from GOOD of tests/worlds/good_bundle.py (lines counted
from 1).
"""

from __future__ import annotations

import json

import duckdb
import pytest

from ingestion.backends.api.interfaces import JudgeEngine, JudgeIdentity, Judgment
from ingestion.backends.drivers.runs import append_rows, judgment_row
from ingestion.bundle import load_bundle, read_bundle
from ingestion.bundle.format import TABLES
from tests.worlds.good_bundle import TAXONOMY, assert_problem, good, the_problem, write

IDENTITY = ("judge_model", "judge_revision", "prompt_template_sha")
ENGINE = ("judge_engine", "judge_engine_version", "judge_gpu_model")


def read_judgments(folder):
    return read_bundle(folder, TAXONOMY)["judgments"]


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_a_judgment_naming_no_judge_is_judge_default(tmp_path, fmt):
    """write_bundle writes the judge columns as null (JSONL `null`, a Parquet null)."""
    judgments = read_judgments(write(tmp_path, good(), fmt))

    assert judgments.column("judge_id").to_pylist() == ["default"] * 9
    assert all(judgments.column(c).null_count == 9 for c in IDENTITY)  # unknown stays unknown


def test_left_out_null_and_explicit_default_are_one_judge(tmp_path):
    folder = write(tmp_path, good())
    lines = [dict(row) for row in good()["judgments"]]  # no judge_id key at all
    lines[0]["judge_id"], lines[1]["judge_id"] = "default", None
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (folder / "judgments.jsonl").write_text(text, encoding="utf-8")

    assert read_judgments(folder).column("judge_id").to_pylist() == ["default"] * 9


def test_two_judges_may_answer_one_question_of_one_image(tmp_path):
    tables = good()
    second = [dict(row, judge_id="j2", answer="no", p_yes=0.1) for row in tables["judgments"]]
    tables["judgments"] += second

    judgments = read_judgments(write(tmp_path, tables))

    assert judgments.num_rows == 18
    assert judgments.column("judge_id").to_pylist() == ["default"] * 9 + ["j2"] * 9


def test_a_null_judge_and_judge_default_on_one_key_are_a_duplicate(tmp_path):
    tables = good()
    tables["judgments"].append(dict(tables["judgments"][2], judge_id="default", answer="no"))

    problem = the_problem(write(tmp_path, tables))

    assert_problem(
        problem,
        "judgments.jsonl",
        10,
        "duplicate (prompt_id, model_id, question_id, judge_id) ('p1', 'm1', 'q3', 'default') "
        "(first on line 3)",
    )


@pytest.mark.parametrize(
    ("judge", "fragment"),
    [
        ("../j", 'judge_id "../j" is not a safe id'),
        (" ", "empty judge_id"),
    ],
)
def test_judge_id_follows_the_safe_id_rule(tmp_path, judge, fragment):
    tables = good()
    tables["judgments"][4]["judge_id"] = judge

    assert_problem(the_problem(write(tmp_path, tables)), "judgments.jsonl", 5, fragment)


def test_a_judge_id_of_the_wrong_type_is_reported_once_not_defaulted(tmp_path):
    """Read as null, a mistyped judge_id must not become `default` and collide with line 1."""
    tables = good()
    tables["judgments"].append(dict(tables["judgments"][0], judge_id=7))

    problem = the_problem(write(tmp_path, tables))

    assert_problem(problem, "judgments.jsonl", 10, "'judge_id' must be a string, got 7")


def test_the_gpu_paths_rows_keep_the_judges_identity_in_the_raw_table(tmp_path):
    """Rows exactly as runs.run_adjudication appends them (judgment_row: the Judgment's fields,
    raw_text and reason included) load with their identity; the bundle names no judge_id."""
    tables = good()
    del tables["judgments"]
    folder = write(tmp_path / "b", tables)
    identity = JudgeIdentity("Qwen/Qwen3-VL-8B-Instruct", "0a1b2c3", "5f4e3d2c1b0a9988")
    judged = [
        Judgment(p, m, q, a, y, raw_text=a or "?", reason=None, **vars(identity))
        for p, m, q, a, y in (
            (r["prompt_id"], r["model_id"], r["question_id"], r["answer"], r["p_yes"])
            for r in good()["judgments"]
        )
    ]
    engine = JudgeEngine("vllm", "0.32.0", "NVIDIA H200")
    rows = [judgment_row(j, identity, engine=engine) for j in judged]
    append_rows(folder / "judgments.jsonl", rows)
    warehouse = tmp_path / "w.duckdb"

    load_bundle(folder, warehouse, TAXONOMY)

    with duckdb.connect(str(warehouse), read_only=True) as con:
        stored = con.sql(
            f"select distinct judge_id, {', '.join(IDENTITY + ENGINE)} from raw.judgments"
        ).fetchall()
        count = con.sql("select count(*) from raw.judgments").fetchall()
    assert stored == [
        (
            "default",
            "Qwen/Qwen3-VL-8B-Instruct",
            "0a1b2c3",
            "5f4e3d2c1b0a9988",
            "vllm",
            "0.32.0",
            "NVIDIA H200",
        )
    ]
    assert count == [(9,)]


def test_a_thinking_judges_reasoning_reaches_the_raw_table_and_a_cut_answer_stays_missing(
    tmp_path,
):
    """Issue 35: a Thinking judge's rows (judgment_row of Judgments with `reasoning`) load with
    the reasoning in raw.judgments, a row whose reasoning its budget cut off with a null answer
    (never "no"), and an Instruct judge's row with a null reasoning. Guards against the import
    dropping the column (the audit trail lost) or a cut answer turned into a "no"."""
    tables = good()
    del tables["judgments"]
    folder = write(tmp_path / "b", tables)
    identity = JudgeIdentity("Qwen/Qwen3-VL-8B-Thinking", "0a1b2c3", "1828396c7b9ab0e5")
    rows = []
    for i, r in enumerate(good()["judgments"]):
        cut = i == 0
        judged = Judgment(
            r["prompt_id"],
            r["model_id"],
            r["question_id"],
            None if cut else r["answer"],
            None if cut else r["p_yes"],
            raw_text="" if cut else str(r["answer"]),
            reason="reasoning over budget (8 tokens)" if cut else None,
            **vars(identity),
            reasoning=None if i == 8 else f"step {i}",
        )
        rows.append(judgment_row(judged, identity))
    append_rows(folder / "judgments.jsonl", rows)
    warehouse = tmp_path / "w.duckdb"

    load_bundle(folder, warehouse, TAXONOMY)

    with duckdb.connect(str(warehouse), read_only=True) as con:
        stored = con.sql(
            "select prompt_id, model_id, question_id, answer, reasoning from raw.judgments"
        ).fetchall()
    first, last = good()["judgments"][0], good()["judgments"][8]
    by_key = {(p, m, q): (a, why) for p, m, q, a, why in stored}
    assert by_key[(first["prompt_id"], first["model_id"], first["question_id"])] == (
        None,
        "step 0",
    )
    assert by_key[(last["prompt_id"], last["model_id"], last["question_id"])][1] is None
    assert sorted(why for _, why in by_key.values() if why) == [f"step {i}" for i in range(8)]


def test_the_judge_columns_and_key_are_the_contracts():
    assert TABLES["judgments"].column_names[-8:] == ("judge_id", *IDENTITY, *ENGINE, "reasoning")
    assert TABLES["judgments"].key == ("prompt_id", "model_id", "question_id", "judge_id")
