"""What an append leaves in the warehouse besides its rows (`ingestion.bundle.append._append`):
the import log gains an `append` row per changing append (never restarted), a table that gained
rows is stored sorted again, and a refusal keeps the folder. Holes `make mutation` found
(issue 36) against the append tests under 1.2 s; bundles from tests/worlds/good_bundle.py,
expected values by hand."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from ingestion.bundle import BundleError, Problem
from ingestion.bundle.append import _drop_replaced_slices, _Slice, append_bundle
from tests.worlds.good_bundle import TAXONOMY, good, write


def test_two_appends_log_two_append_rows_and_keep_generators_sorted(tmp_path):
    """Guards the log (mode `append`, not restarted by the second append: two rows, the second
    adding one generator) and the re-sort of a table that only gained rows (`m0` appended
    after m1 and m2 is stored first)."""
    warehouse = tmp_path / "w.duckdb"
    append_bundle(write(tmp_path / "first", good()), warehouse, capabilities=TAXONOMY)
    second = good()
    second["generators"].append({"model_id": "m0", "display_name": "Model Zero"})
    append_bundle(write(tmp_path / "second", second), warehouse, capabilities=TAXONOMY)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        log = con.execute(
            "SELECT mode, n_generators, n_judgments FROM raw.bundle_imports ORDER BY imported_at"
        ).fetchall()
        generators = [
            row[0] for row in con.execute("SELECT model_id FROM raw.generators").fetchall()
        ]
    assert log == [("append", 2, 9), ("append", 1, 0)]
    assert generators == ["m0", "m1", "m2"]


def test_contradictions_are_listed_up_to_50_rows_then_counted_as_more(tmp_path):
    """Guards the refusal of a contradicting append: its folder kept; the file named as read
    (`generators.parquet` for a Parquet bundle, not `.jsonl`); the first 50 contradicting rows
    listed, one problem each, and a 51st row only said to exist (no line); exactly 50 rows
    listed without that line. The stored bundle has 51 generators (m1, m2 and g00-g48)."""
    warehouse = tmp_path / "w.duckdb"
    first = good()
    first["generators"] += [{"model_id": f"g{i:02}", "display_name": "G"} for i in range(49)]
    append_bundle(write(tmp_path / "first", first), warehouse, capabilities=TAXONOMY)
    every_name_changed = good()
    every_name_changed["generators"] = [
        {**row, "display_name": "Renamed"} for row in first["generators"]
    ]
    folder = write(tmp_path / "all", every_name_changed, "parquet")
    with pytest.raises(BundleError) as refused:
        append_bundle(folder, warehouse, capabilities=TAXONOMY)
    assert refused.value.folder == folder
    problems = refused.value.problems
    assert [(p.file, p.line) for p in problems[:50]] == [
        ("generators.parquet", line) for line in range(1, 51)
    ]
    assert problems[50:] == [
        Problem(
            "generators.parquet", None, "more rows contradict stored ones (the first 50 are listed)"
        )
    ]
    fifty_changed = good()
    fifty_changed["generators"] = every_name_changed["generators"][:50] + first["generators"][50:]
    with pytest.raises(BundleError) as refused:
        append_bundle(write(tmp_path / "fifty", fifty_changed), warehouse, capabilities=TAXONOMY)
    assert [p.line for p in refused.value.problems] == list(range(1, 51))


def test_replacing_a_generator_swaps_its_rows_in_every_table_and_counts_them(tmp_path):
    """Guards `_drop_replaced_slices`: `--replace-model m2` deletes m2's stored rows in each
    table the bundle carries m2 rows of (generators 1, images 1 (i3), judgments 3, transcriptions
    1), keeps m1's, and the bundle's m2 rows take their place: m2's q1 answer turned from yes to
    no."""
    warehouse = tmp_path / "w.duckdb"
    append_bundle(write(tmp_path / "first", good()), warehouse, capabilities=TAXONOMY)
    changed = good()
    m2_q1 = next(
        row
        for row in changed["judgments"]
        if (row["model_id"], row["prompt_id"], row["question_id"]) == ("m2", "p1", "q1")
    )
    m2_q1["answer"], m2_q1["p_yes"] = "no", 0.1
    result = append_bundle(
        write(tmp_path / "second", changed), warehouse, ["m2"], capabilities=TAXONOMY
    )
    replaced = {name: n for name, n in result.replaced.items() if n}
    assert replaced == {"generators": 1, "images": 1, "judgments": 3, "transcriptions": 1}
    with duckdb.connect(str(warehouse), read_only=True) as con:
        answers = con.execute(
            "SELECT model_id, answer FROM raw.judgments "
            "WHERE prompt_id = 'p1' AND question_id = 'q1' ORDER BY model_id"
        ).fetchall()
        judgments = con.execute("SELECT count(*) FROM raw.judgments").fetchone()[0]
    assert answers == [("m1", "yes"), ("m2", "no")]
    assert judgments == 9


def test_an_unlisted_model_and_a_new_question_of_a_stored_prompt_are_refused_where_they_are(
    tmp_path,
):
    """Guards `_unlisted_models` and `_question_set_problems`: after good() is stored, a bundle
    without a generators file bringing model m3 (image line 4, judgment line 10, transcription
    line 3) and a new question q4 of the stored prompt p1 (questions line 7) is refused with
    one problem per table where each first appears, named by its own file, in that order."""
    warehouse = tmp_path / "w.duckdb"
    append_bundle(write(tmp_path / "first", good()), warehouse, capabilities=TAXONOMY)
    tables = good()
    del tables["generators"]
    tables["images"].append({**tables["images"][2], "image_id": "i4", "model_id": "m3"})
    tables["judgments"].append({**tables["judgments"][0], "model_id": "m3"})
    tables["transcriptions"].append({**tables["transcriptions"][0], "model_id": "m3"})
    tables["questions"].append({**tables["questions"][1], "question_id": "q4", "parents": []})
    with pytest.raises(BundleError) as refused:
        append_bundle(write(tmp_path / "second", tables), warehouse, capabilities=TAXONOMY)
    unlisted = (
        "model 'm3' is not listed in generators (the warehouse's or this bundle's); "
        "add its row to the bundle's generators file"
    )
    assert refused.value.problems == [
        Problem(
            "questions.jsonl",
            7,
            "question 'q4' is new, but prompt 'p1' is stored with its questions; a stored "
            "prompt's questions cannot change (give the new version a new prompt_id)",
        ),
        Problem("images.jsonl", 4, unlisted),
        Problem("judgments.jsonl", 10, unlisted),
        Problem("transcriptions.jsonl", 3, unlisted),
    ]


def test_a_judge_to_replace_must_be_in_the_bundle_and_the_callers_taxonomy_is_used(tmp_path):
    """Guards `append_bundle`'s arguments: the caller's taxonomy checks the bundle (a capability
    only it holds is accepted, not checked against the seed's), and `--replace-judge` names a
    judge slice (`judge_id`): one the bundle holds no rows of is refused on the command line,
    with the folder, before the warehouse is touched."""
    tables = good()
    tables["questions"][5]["capability"] = "ours_only"
    folder = write(tmp_path / "b", tables)
    warehouse = tmp_path / "w.duckdb"
    taxonomy = TAXONOMY | {"ours_only"}
    with pytest.raises(BundleError) as refused:
        append_bundle(folder, warehouse, capabilities=taxonomy, replace_judges=["nobody"])
    assert refused.value.folder == folder
    assert refused.value.problems == [
        Problem(
            "(command line)", None, "--replace-judge nobody: the bundle holds no rows of this judge"
        )
    ]
    assert not warehouse.exists()
    assert append_bundle(folder, warehouse, capabilities=taxonomy).added["questions"] == 6


def test_a_model_and_a_judge_replaced_together_drop_either_slice():
    """Guards against append._drop_replaced_slices_12: the DELETE's two slices joined by
    "XX OR XX" instead of " OR ", which only `--replace-model` with `--replace-judge` builds."""
    con = duckdb.connect()
    con.execute("CREATE SCHEMA raw")
    con.execute('CREATE TABLE raw.judgments ("model_id" VARCHAR, "judge_id" VARCHAR)')
    stored = [("m1", "j1"), ("m1", "j2"), ("m2", "j2"), ("m2", "j1")]
    con.executemany("INSERT INTO raw.judgments VALUES (?, ?)", stored)
    bundle = pa.table({"model_id": ["m1", "m3"], "judge_id": ["j3", "j2"]})
    slices = [_Slice("model_id", "m1"), _Slice("judge_id", "j2")]

    # m1's two rows and j2's (m2, j2): three dropped, (m2, j1) kept
    assert _drop_replaced_slices(con, "judgments", bundle, slices) == 3
    assert con.execute("SELECT * FROM raw.judgments").fetchall() == [("m2", "j1")]
