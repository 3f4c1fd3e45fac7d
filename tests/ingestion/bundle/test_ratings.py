"""The optional `ratings` and `conversion_report` files and the CONTRACTS "Additions" columns
(issue 15): read, checked like every other table, stored sorted by key, and added to warehouses
stored before them."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestion.bundle import BundleError, load_bundle, read_bundle
from ingestion.bundle.raw_tables import upgrade_raw_tables
from tests.worlds.good_bundle import (
    TAXONOMY,
    assert_problem,
    good,
    rows,
    the_problem,
    write,
)

RATINGS = rows(
    "prompt_id model_id rater_id rating scale",
    ("p1", "m2", "w2", 4.0, "likert_1_5"),
    ("p1", "m1", "w1", 5.0, "likert_1_5"),
    ("p1", "m1", "w2", 3.0, "likert_1_5"),
)


def with_ratings(ratings: list[dict] = RATINGS) -> dict[str, list[dict]]:
    tables = good()
    tables["ratings"] = [dict(row) for row in ratings]
    return tables


def test_ratings_are_stored_sorted_by_prompt_model_and_rater(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    counts = load_bundle(write(tmp_path / "b", with_ratings()), warehouse, TAXONOMY)

    assert counts["ratings"] == 3
    with duckdb.connect(str(warehouse), read_only=True) as con:
        stored = con.execute("SELECT * FROM raw.ratings").fetchall()
        logged = con.execute("SELECT n_ratings FROM raw.bundle_imports").fetchall()
    assert stored == [
        ("p1", "m1", "w1", 5.0, "likert_1_5"),
        ("p1", "m1", "w2", 3.0, "likert_1_5"),
        ("p1", "m2", "w2", 4.0, "likert_1_5"),
    ]
    assert logged == [(3,)]


def test_a_rating_of_an_unknown_prompt_is_refused_with_its_line(tmp_path):
    ratings = [*RATINGS, {"prompt_id": "p9", "model_id": "m1", "rater_id": "w1", "rating": 2.0,
                          "scale": "likert_1_5"}]  # fmt: skip

    problem = the_problem(write(tmp_path / "b", with_ratings(ratings)))

    assert_problem(problem, "ratings.jsonl", 4, "unknown prompt 'p9'")


def test_a_rating_of_an_unlisted_generator_is_refused(tmp_path):
    ratings = [dict(RATINGS[0], model_id="m9")]

    problem = the_problem(write(tmp_path / "b", with_ratings(ratings)))

    assert_problem(problem, "ratings.jsonl", 1, "model 'm9' is not listed in generators")


def test_a_rater_rating_one_image_twice_is_refused(tmp_path):
    ratings = [*RATINGS, dict(RATINGS[1], rating=1.0)]

    problem = the_problem(write(tmp_path / "b", with_ratings(ratings)))

    assert (problem.file, problem.line) == ("ratings.jsonl", 4)
    assert "'p1', 'm1', 'w1'" in problem.reason


def test_an_empty_scale_is_refused(tmp_path):
    ratings = [dict(RATINGS[0], scale=" ")]

    problem = the_problem(write(tmp_path / "b", with_ratings(ratings)))

    assert_problem(problem, "ratings.jsonl", 1, "empty scale")


def test_a_rating_that_is_not_finite_is_refused(tmp_path):
    folder = write(tmp_path / "b", with_ratings(), "parquet")
    table = pq.read_table(folder / "ratings.parquet")
    position = table.column_names.index("rating")
    ratings = pa.array([4.0, float("inf"), 3.0])
    pq.write_table(table.set_column(position, "rating", ratings), folder / "ratings.parquet")

    problem = the_problem(folder)

    assert_problem(problem, "ratings.parquet", 2, "rating must be a finite number, got inf")


def test_a_hub_id_may_hold_a_slash_but_a_model_id_may_not(tmp_path):
    tables = good()
    tables["generators"][0]["hub_id"] = "black-forest-labs/FLUX.2-dev"
    tables["generators"][0]["revision"] = "0123abc"
    tables["images"][0]["seed"] = 7

    read = read_bundle(write(tmp_path / "ok", tables), TAXONOMY)

    assert read["generators"]["hub_id"].to_pylist() == ["black-forest-labs/FLUX.2-dev", None]
    assert read["images"]["seed"].to_pylist() == [7, None, None]
    tables["generators"][0]["model_id"] = "black-forest-labs/FLUX.2-dev"
    problems = [str(p) for p in _problems(write(tmp_path / "bad", tables))]
    assert any("model_id" in p and "is not a safe id" in p for p in problems), problems


def _problems(folder):
    with pytest.raises(BundleError) as refused:
        read_bundle(folder, TAXONOMY)
    return refused.value.problems


def test_a_warehouse_stored_before_ratings_gains_an_empty_ratings_table(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write(tmp_path / "b", good()), warehouse, TAXONOMY)
    with duckdb.connect(str(warehouse)) as con:  # as an older version stored it
        con.execute("DROP TABLE raw.ratings")
        con.execute("ALTER TABLE raw.bundle_imports DROP COLUMN n_ratings")
        con.execute("ALTER TABLE raw.transcriptions DROP COLUMN reason")

    upgrade_raw_tables(warehouse)

    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM raw.ratings").fetchall() == [(0,)]
        reasons = con.execute("SELECT reason FROM raw.transcriptions").fetchall()
    assert reasons == [(None,), (None,)]


REPORT_ROW = {
    "source_file": "anns.csv",
    "line": 3,
    "dirty_class": "self_loop",
    "action": "repaired",
    "reason": "question 2 lists itself",
}


@pytest.mark.parametrize(
    ("column", "value", "fragment"),
    [
        ("action", "ignored", "action must be 'repaired' or 'dropped', got 'ignored'"),
        ("line", 0, "line must be >= 1, got 0"),
    ],
)
def test_a_conversion_report_row_must_say_what_was_done_and_where(
    tmp_path, column, value, fragment
):
    tables = good()
    tables["conversion_report"] = [dict(REPORT_ROW, **{column: value})]

    problem = the_problem(write(tmp_path / "b", tables))

    assert_problem(problem, "conversion_report.jsonl", 1, fragment)


def test_a_conversion_report_is_stored_in_key_order(tmp_path):
    tables = good()
    tables["conversion_report"] = [REPORT_ROW, dict(REPORT_ROW, line=2, dirty_class="cycle")]
    warehouse = tmp_path / "w.duckdb"

    load_bundle(write(tmp_path / "b", tables), warehouse, TAXONOMY)

    with duckdb.connect(str(warehouse), read_only=True) as con:
        stored = con.execute("SELECT line, dirty_class FROM raw.conversion_report").fetchall()
    assert stored == [(2, "cycle"), (3, "self_loop")]  # in key order, not file order
