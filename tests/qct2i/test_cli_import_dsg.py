"""`qct2i import-dsg` as a user runs it: the real TIFA160 subset with three judges, and --strict."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

from ingestion.store.warehouse import Warehouse
from tests.helpers import query, require_test_data, run_cli, run_main
from tests.ingestion.sources.test_dsg_release import (
    ANNS,
    ANSWERS,
    JUDGES,
    csv_rows,
    write_dsg_fixture,
)


def _tifa160_questions(dsg_1k: Path, out: Path) -> list[dict]:
    """DSG-1k's `tifa160_` items: the questions the release's TIFA160 answers refer to."""
    rows = [r for r in csv_rows(dsg_1k) if r["item_id"].startswith("tifa160_")]
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return rows


def test_tifa160_subset_imports_with_three_judges(tmp_path, dsg_1k_path):
    answers = [require_test_data(ANSWERS / f"{j}_dsg.csv", f"{j} answers") for j in JUDGES]
    ratings = require_test_data(ANNS / "tifa160-likert-anns.csv", "TIFA160 Likert ratings")
    questions = _tifa160_questions(dsg_1k_path, tmp_path / "tifa160-anns.csv")
    warehouse = tmp_path / "w.duckdb"
    args = ["import-dsg", "--questions", str(tmp_path / "tifa160-anns.csv")]
    args += [arg for path in answers for arg in ("--answers", str(path))]
    done = run_cli([*args, "--ratings", str(ratings), "--out", str(tmp_path / "b")], warehouse)
    assert done.returncode == 0, done.stderr
    tifa = {
        j: [r for r in csv_rows(a) if r["dsg_prompt_split"] == "tifa160"]
        for j, a in zip(JUDGES, answers, strict=True)
    }
    not_yes_no = sum(
        r["answer"].strip().lower() not in ("yes", "no") for rows in tifa.values() for r in rows
    )
    assert f"answer_not_yes_no={not_yes_no}" in done.stdout
    working = Warehouse(warehouse).working
    assert query(working, "select count(*) from raw.prompts") == [
        (len({r["item_id"] for r in questions}),)
    ]
    assert query(working, "select count(*) from raw.questions") == [(len(questions),)]
    stored = dict(query(working, "select judge_id, count(*) from raw.judgments group by 1"))
    assert stored == {j: len(rows) for j, rows in tifa.items()}
    models = {m for (m,) in query(working, "select distinct model_id from raw.judgments")}
    assert models == {"mini-dalle", "sd1dot1", "sd1dot5", "sd2dot1", "vq-diffusion"}
    nulls = query(working, "select count(*) from raw.judgments where answer is null")
    assert nulls == [(not_yes_no,)]
    # the human ratings: every row of the release's Likert file, counted straight from the CSV
    likert = csv_rows(ratings)
    assert "rating_not_on_scale=0" in done.stdout and "duplicate_rating=0" in done.stdout
    by_value = dict(query(working, "select rating, count(*) from raw.ratings group by 1"))
    assert by_value == {float(v): n for v, n in Counter(r["answer"] for r in likert).items()}
    raters = query(
        working, "select count(distinct rater_id), min(scale), max(scale) from raw.ratings"
    )
    assert raters == [(len({r["worker_id"] for r in likert}), "likert_1_5", "likert_1_5")]
    images = query(working, "select count(distinct (model_id, prompt_id)) from raw.ratings")
    assert images == [(len({(r["t2i_model"], r["item_id"]) for r in likert}),)]


def test_strict_import_refuses_listing_file_line_and_reason(tmp_path):
    questions, answers = write_dsg_fixture(tmp_path)
    warehouse = tmp_path / "w.duckdb"
    args = ["import-dsg", "--questions", str(questions), "--answers", str(answers), "--strict"]
    refused = run_cli(args, warehouse)
    assert refused.returncode == 2
    assert "hand-anns.csv:3: parent_in_words" in refused.stderr
    assert "j1_dsg.csv:8: duplicate_answer" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not warehouse.exists() and not Warehouse(warehouse).working.exists()


def test_default_import_repairs_and_counts_every_class(tmp_path):
    questions, answers = write_dsg_fixture(tmp_path)
    warehouse = tmp_path / "w.duckdb"
    done = run_cli(
        ["import-dsg", "--questions", str(questions), "--answers", str(answers)], warehouse
    )
    assert done.returncode == 0, done.stderr
    # the hand fixture's counts, by hand (tests/ingestion/sources/test_dsg_release.py marks
    # each line)
    expected = Counter(
        parent_in_words=1,
        self_loop=1,
        missing_parent=1,
        cycle=1,
        answer_not_yes_no=2,
        unknown_question=1,
        duplicate_answer=1,
        duplicate_question=1,
    )
    for name, count in expected.items():
        assert f"{name}={count}" in done.stdout
    working = Warehouse(warehouse).working
    assert query(working, "select count(*) from raw.judgments") == [(5,)]


def test_a_release_with_one_judge_is_built_with_that_judge(tmp_path):
    """A release names its judge (the hand DSG fixture's `j1`), so the default official judge
    has no judgments; the warehouse holds one judge, so `qct2i build` takes it and says so."""
    questions, answers = write_dsg_fixture(tmp_path)
    warehouse = tmp_path / "w.duckdb"
    args = ["import-dsg", "--questions", str(questions), "--answers", str(answers)]
    assert run_main(args, warehouse).returncode == 0
    built = run_main(["build"], warehouse)
    assert built.returncode == 0, built.stderr[-3000:]
    assert built.stdout.splitlines()[0] == "official judge: j1 (the one judge this warehouse holds)"
    assert query(warehouse, "select build_vars from main.build_id") == [
        ('{"official_judge": "j1"}',)
    ]
    # every yes/no answer of j1 is a scored record (the marts read j1's judgments)
    answered = query(warehouse, "select count(answer) from raw.judgments where judge_id = 'j1'")
    scored = query(warehouse, "select count(outcome) from marts.fct_question_records")
    assert scored == answered and answered[0][0] > 0
