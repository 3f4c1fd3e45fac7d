"""Append import (ingestion/bundle/append.py; CONTRACTS Additions: `qct2i import DIR --append`).

Expected raw tables come from the replacing importer on the union of the bundles (an independent
route: it never compares or merges), or are written out by hand.
"""

from __future__ import annotations

import copy

import duckdb
import pytest

from ingestion.bundle import BundleError, load_bundle
from ingestion.bundle.append import append_bundle
from ingestion.bundle.format import TABLES, write_bundle
from ingestion.store.warehouse import Warehouse
from tests.helpers import run_main
from tests.worlds.hand import hand_bundle_tables


def raw_tables(warehouse) -> dict[str, list[tuple]]:
    """Every raw table's rows in stored order (the order is part of what must match)."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return {name: con.sql(f"select * from raw.{name}").fetchall() for name in TABLES}


def import_log(warehouse) -> list[tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return con.sql("select mode, n_judgments from raw.bundle_imports").fetchall()


def only_models(tables: dict[str, list[dict]], models: set[str]) -> dict[str, list[dict]]:
    """The bundle restricted to some generators' evidence (prompts and questions kept whole)."""
    return {
        name: [row for row in rows if "model_id" not in row or row["model_id"] in models]
        for name, rows in tables.items()
    }


def with_generators(tables: dict[str, list[dict]]) -> dict[str, list[dict]]:
    models = sorted({row["model_id"] for row in tables["judgments"]})
    listed = [{"model_id": m, "display_name": m.upper(), "cost_gpu_s_per_mp": 10.0} for m in models]
    return {**tables, "generators": listed}


@pytest.fixture
def hand():
    return with_generators(hand_bundle_tables())


@pytest.fixture
def models(hand):
    return sorted({row["model_id"] for row in hand["judgments"]})


def test_halves_appended_equal_one_import(tmp_path, hand, models):
    first, last = set(models[:-1]), {models[-1]}
    one_shot = tmp_path / "one.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "all", hand), one_shot)
    halves = tmp_path / "halves.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "first", only_models(hand, first)), halves)

    result = append_bundle(write_bundle_dir(tmp_path / "last", only_models(hand, last)), halves)

    assert raw_tables(halves) == raw_tables(one_shot)
    expected_new = sum(1 for row in hand["judgments"] if row["model_id"] in last)
    assert result.added["judgments"] == expected_new
    assert result.added["prompts"] == 0 and result.added["questions"] == 0
    assert result.added["generators"] == 1
    assert import_log(halves) == [
        ("replace", len(hand["judgments"]) - expected_new),
        ("append", expected_new),
    ]


def test_appending_to_an_empty_warehouse_equals_a_replacing_import(tmp_path, hand):
    bundle = write_bundle_dir(tmp_path / "b", hand)
    replaced, appended = tmp_path / "r.duckdb", tmp_path / "a.duckdb"
    load_bundle(bundle, replaced)

    append_bundle(bundle, appended)

    assert raw_tables(appended) == raw_tables(replaced)


def test_the_same_bundle_twice_is_a_no_op(tmp_path, hand):
    bundle = write_bundle_dir(tmp_path / "b", hand)
    warehouse = tmp_path / "w.duckdb"
    load_bundle(bundle, warehouse)
    before, log = raw_tables(warehouse), import_log(warehouse)

    result = append_bundle(bundle, warehouse)

    assert not result.changed
    assert raw_tables(warehouse) == before
    assert import_log(warehouse) == log  # a no-op leaves no trace


def test_the_same_evidence_in_parquet_is_a_no_op(tmp_path, hand):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "jsonl", hand), warehouse)

    result = append_bundle(write_bundle_dir(tmp_path / "pq", hand, fmt="parquet"), warehouse)

    assert not result.changed


def test_a_contradicting_judgment_is_refused_with_both_values(tmp_path, hand):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "b", hand), warehouse)
    before = raw_tables(warehouse)
    changed = copy.deepcopy(hand)
    index = next(i for i, r in enumerate(changed["judgments"]) if r["answer"] == "yes")
    row = changed["judgments"][index]
    row["answer"], row["p_yes"] = "no", 0.25

    with pytest.raises(BundleError) as refused:
        append_bundle(write_bundle_dir(tmp_path / "c", changed), warehouse)

    problems = [str(p) for p in refused.value.problems]
    key = (
        f"prompt_id '{row['prompt_id']}', model_id '{row['model_id']}', "
        f"question_id '{row['question_id']}', judge_id 'default'"  # no judge named: `default`
    )
    line = index + 1  # JSONL: one row per line, written in list order
    hint = (
        "pass --replace-model MODEL_ID or --replace-judge JUDGE_ID to replace that generator's "
        "or that judge's stored evidence"
    )
    assert problems == [
        f"judgments.jsonl:{line}: judgment ({key}) contradicts the stored row: answer is 'yes' "
        f"in the warehouse, 'no' in this bundle; {hint}",
        f"judgments.jsonl:{line}: judgment ({key}) contradicts the stored row: p_yes is 0.9 "
        f"in the warehouse, 0.25 in this bundle; {hint}",
    ]
    assert raw_tables(warehouse) == before


def test_replace_model_swaps_that_generators_slice(tmp_path, hand, models):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "b", hand), warehouse)
    target = models[0]
    rejudged = copy.deepcopy(only_models(hand, {target}))
    for row in rejudged["judgments"]:
        row["answer"], row["p_yes"] = "no", 0.0
    rejudged["judgments"] = rejudged["judgments"][:-1]  # the re-judged run lost one answer

    result = append_bundle(
        write_bundle_dir(tmp_path / "r", rejudged), warehouse, replace_models=[target]
    )

    expected = copy.deepcopy(hand)
    expected["judgments"] = [
        r for r in expected["judgments"] if r["model_id"] != target
    ] + rejudged["judgments"]
    reference = tmp_path / "reference.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "e", expected), reference)
    assert raw_tables(warehouse) == raw_tables(reference)
    stored_of_target = sum(1 for r in hand["judgments"] if r["model_id"] == target)
    assert result.replaced["judgments"] == stored_of_target
    assert result.added["judgments"] == stored_of_target - 1


def test_replace_model_needs_that_model_in_the_bundle(tmp_path, hand, models):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "b", hand), warehouse)
    subset = only_models(hand, {models[0]})

    with pytest.raises(BundleError, match="--replace-model nobody: the bundle holds no rows"):
        append_bundle(write_bundle_dir(tmp_path / "s", subset), warehouse, ["nobody"])


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            lambda t: t["prompts"][0].update(text="a different prompt"),
            "prompts.jsonl:1: prompt (prompt_id '{p}') contradicts the stored row: text is",
        ),
        (
            lambda t: t["questions"][0].update(capability="color"),
            "questions.jsonl:1: question (prompt_id '{p}', question_id '{q}') contradicts the "
            "stored row: capability is",
        ),
        (
            lambda t: t["questions"].append(
                {**t["questions"][0], "question_id": "q_new", "parents": []}
            ),
            "question 'q_new' is new, but prompt '{p}' is stored with its questions",
        ),
    ],
    ids=["prompt-text", "question-capability", "new-question"],
)
def test_a_stored_prompt_must_come_back_the_same(tmp_path, hand, change, expected):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "b", hand), warehouse)
    changed = copy.deepcopy(hand)
    change(changed)
    first = hand["questions"][0]

    with pytest.raises(BundleError) as refused:
        append_bundle(write_bundle_dir(tmp_path / "c", changed), warehouse)

    message = expected.format(p=first["prompt_id"], q=first["question_id"])
    assert any(message in str(p) for p in refused.value.problems), refused.value.problems


def test_a_dropped_question_of_a_stored_prompt_is_refused(tmp_path, hand):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "b", hand), warehouse)
    changed = copy.deepcopy(hand)
    # drop a leaf (no other question names it as a parent) and its judgments
    prompt = changed["prompts"][0]["prompt_id"]
    questions = [q for q in changed["questions"] if q["prompt_id"] == prompt]
    parents = {p for q in questions for p in q["parents"]}
    leaf = next(q["question_id"] for q in reversed(questions) if q["question_id"] not in parents)
    changed["questions"] = [
        q for q in changed["questions"] if (q["prompt_id"], q["question_id"]) != (prompt, leaf)
    ]
    changed["judgments"] = [
        j for j in changed["judgments"] if (j["prompt_id"], j["question_id"]) != (prompt, leaf)
    ]

    with pytest.raises(BundleError) as refused:
        append_bundle(write_bundle_dir(tmp_path / "c", changed), warehouse)

    assert [str(p) for p in refused.value.problems] == [
        f"prompts.jsonl:1: prompt '{prompt}' is stored with question '{leaf}', which this "
        "bundle lacks; a stored prompt's questions cannot change"
    ]


def test_a_new_prompt_with_its_questions_is_added(tmp_path, hand, models):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "b", hand), warehouse)
    extra = {
        "prompts": [dict(hand["prompts"][0], prompt_id="new-en", concept_id="new")],
        "questions": [
            dict(q, prompt_id="new-en")
            for q in hand["questions"]
            if q["prompt_id"] == hand["prompts"][0]["prompt_id"]
        ],
        "generators": [g for g in hand["generators"] if g["model_id"] == models[0]],
        "judgments": [],
    }
    extra["judgments"] = [
        {
            "prompt_id": "new-en",
            "model_id": models[0],
            "question_id": q["question_id"],
            "answer": "yes",
            "p_yes": 1.0,
        }
        for q in extra["questions"]
    ]

    result = append_bundle(write_bundle_dir(tmp_path / "x", extra), warehouse)

    assert result.added["prompts"] == 1
    assert result.added["questions"] == len(extra["questions"])
    assert result.added["judgments"] == len(extra["questions"])
    with duckdb.connect(str(warehouse), read_only=True) as con:
        orders = con.sql(
            "select question_order from raw.questions where prompt_id = 'new-en' "
            "order by question_order"
        ).fetchall()
    assert [o for (o,) in orders] == list(range(1, len(extra["questions"]) + 1))


def test_an_unlisted_generator_is_refused_once_generators_are_listed(tmp_path, hand, models):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "b", hand), warehouse)
    newcomer = copy.deepcopy(only_models(hand, {models[0]}))
    del newcomer["generators"]
    for row in newcomer["judgments"]:
        row["model_id"] = "newcomer"
    del newcomer["transcriptions"]

    with pytest.raises(BundleError) as refused:
        append_bundle(write_bundle_dir(tmp_path / "n", newcomer), warehouse)

    assert [str(p) for p in refused.value.problems] == [
        "judgments.jsonl:1: model 'newcomer' is not listed in generators (the warehouse's or "
        "this bundle's); add its row to the bundle's generators file"
    ]


def test_cli_append_refuses_a_contradiction_without_a_traceback(tmp_path, hand):
    warehouse = tmp_path / "qct2i.duckdb"
    imported = run_main(["import", str(write_bundle_dir(tmp_path / "b", hand))], warehouse)
    assert imported.returncode == 0, imported.stderr
    changed = copy.deepcopy(hand)
    assert changed["judgments"][0]["p_yes"] != 0.5
    changed["judgments"][0]["p_yes"] = 0.5

    refused = run_main(
        ["import", "--append", str(write_bundle_dir(tmp_path / "c", changed))], warehouse
    )
    again = run_main(["import", "--append", str(tmp_path / "b")], warehouse)

    assert refused.returncode == 2
    assert "Traceback" not in refused.stderr
    assert "judgments.jsonl:1: judgment (" in refused.stderr
    assert "in the warehouse, 0.5 in this bundle" in refused.stderr
    assert again.returncode == 0
    assert "nothing new" in again.stdout


def test_cli_replace_model_needs_append(tmp_path, hand):
    refused = run_main(
        ["import", "--replace-model", "x", str(write_bundle_dir(tmp_path / "b", hand))],
        tmp_path / "qct2i.duckdb",
    )
    assert refused.returncode == 2
    assert "--replace-model only applies to an append import" in refused.stderr


# ------------------------------------------------------------------------------------------------
# Judges: part of a judgment's key; `--replace-judge` swaps one judge's slice
# ------------------------------------------------------------------------------------------------

SECOND = {"judge_id": "second", "judge_model": "vlm-b", "judge_revision": "r2"}


def by_judge(tables, judge: dict, flip: bool = True) -> dict[str, list[dict]]:
    """The bundle with its judgments answered by `judge`: every yes a no and back when `flip`
    (a judge that contradicts the first on every answered question)."""
    flipped = {"yes": "no", "no": "yes", None: None}
    judged = copy.deepcopy(tables)
    for row in judged["judgments"]:
        row.update(judge)
        if flip:
            row["answer"] = flipped[row["answer"]]
            row["p_yes"] = None if row["p_yes"] is None else round(1 - row["p_yes"], 6)
    return judged


def with_judgments(tables, judgments: list[dict]) -> dict[str, list[dict]]:
    return {**tables, "judgments": judgments}


def test_a_second_judges_answers_are_new_keys_not_contradictions(tmp_path, hand):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "b", hand), warehouse)
    second = by_judge(hand, SECOND)

    result = append_bundle(write_bundle_dir(tmp_path / "s", second), warehouse)

    both = with_judgments(hand, hand["judgments"] + second["judgments"])
    reference = tmp_path / "reference.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "both", both), reference)
    assert raw_tables(warehouse) == raw_tables(reference)
    assert result.added["judgments"] == len(hand["judgments"])
    assert not result.added["prompts"] and not result.added["generators"]


def test_a_contradicting_row_of_a_named_judge_names_the_judge(tmp_path, hand):
    warehouse = tmp_path / "w.duckdb"
    second = by_judge(hand, SECOND)
    load_bundle(write_bundle_dir(tmp_path / "b", second), warehouse)
    changed = copy.deepcopy(second)
    row = changed["judgments"][0]
    assert row["judge_revision"] == "r2"
    row["judge_revision"] = "r3"  # the same judge id, upgraded: not silently mixed in

    with pytest.raises(BundleError) as refused:
        append_bundle(write_bundle_dir(tmp_path / "c", changed), warehouse)

    assert [str(p) for p in refused.value.problems] == [
        f"judgments.jsonl:1: judgment (prompt_id '{row['prompt_id']}', model_id "
        f"'{row['model_id']}', question_id '{row['question_id']}', judge_id 'second') "
        "contradicts the stored row: judge_revision is 'r2' in the warehouse, 'r3' in this "
        "bundle; pass --replace-model MODEL_ID or --replace-judge JUDGE_ID to replace that "
        "generator's or that judge's stored evidence"
    ]


def test_replace_judge_swaps_that_judges_slice_only(tmp_path, hand, models):
    warehouse = tmp_path / "w.duckdb"
    second = by_judge(hand, SECOND)
    both = with_judgments(hand, hand["judgments"] + second["judgments"])
    load_bundle(write_bundle_dir(tmp_path / "b", both), warehouse)
    # the second judge re-run, upgraded, on one generator only, losing one answer
    rerun = by_judge(only_models(hand, {models[0]}), {**SECOND, "judge_revision": "r3"}, False)
    rerun["judgments"] = rerun["judgments"][:-1]

    result = append_bundle(
        write_bundle_dir(tmp_path / "r", rerun), warehouse, replace_judges=["second"]
    )

    expected = with_judgments(hand, hand["judgments"] + rerun["judgments"])
    reference = tmp_path / "reference.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "e", expected), reference)
    assert raw_tables(warehouse) == raw_tables(reference)
    assert result.replaced == {name: 0 for name in TABLES} | {"judgments": len(hand["judgments"])}
    assert result.added["judgments"] == len(rerun["judgments"])


def test_replace_judge_and_replace_model_drop_their_union_once(tmp_path, hand, models):
    warehouse = tmp_path / "w.duckdb"
    second = by_judge(hand, SECOND)
    stored = with_judgments(hand, hand["judgments"] + second["judgments"])
    load_bundle(write_bundle_dir(tmp_path / "b", stored), warehouse)
    target = models[0]
    # the target's images drawn again and judged by `default` (all yes), and `second` re-run
    # everywhere (now agreeing with `default` on the stored images)
    regenerated = [
        dict(r, answer="yes", p_yes=1.0) for r in hand["judgments"] if r["model_id"] == target
    ]
    rejudged = by_judge(hand, SECOND, flip=False)["judgments"]

    result = append_bundle(
        write_bundle_dir(tmp_path / "r", with_judgments(hand, regenerated + rejudged)),
        warehouse,
        replace_models=[target],
        replace_judges=["second"],
    )

    # dropped once each: every `second` row, and the target's `default` rows
    assert result.replaced["judgments"] == len(hand["judgments"]) + len(regenerated)
    others = [r for r in hand["judgments"] if r["model_id"] != target]
    expected = with_judgments(hand, others + regenerated + rejudged)
    reference = tmp_path / "reference.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "e", expected), reference)
    assert raw_tables(warehouse) == raw_tables(reference)


def test_replace_judge_needs_that_judge_in_the_bundle(tmp_path, hand):
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "b", hand), warehouse)
    before = raw_tables(warehouse)

    with pytest.raises(BundleError) as refused:
        append_bundle(write_bundle_dir(tmp_path / "s", hand), warehouse, replace_judges=["second"])

    assert [str(p) for p in refused.value.problems] == [
        "(command line): --replace-judge second: the bundle holds no rows of this judge"
    ]
    assert raw_tables(warehouse) == before


def test_a_warehouse_stored_before_judges_gains_the_columns_on_append(tmp_path, hand):
    """raw.judgments as stored before CONTRACTS "Additions" (so before the later engine and
    reasoning columns too): an append adds the judge columns, reads the stored rows as judge
    `default`, and then takes a second judge as new keys."""
    warehouse = tmp_path / "w.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "b", hand), warehouse)
    later = ("judge_id", "judge_model", "judge_revision", "prompt_template_sha")
    later += ("judge_engine", "judge_engine_version", "judge_gpu_model", "reasoning")
    with duckdb.connect(str(warehouse)) as con:
        for column in later:
            con.execute(f"ALTER TABLE raw.judgments DROP COLUMN {column}")

    unchanged = append_bundle(tmp_path / "b", warehouse)
    second = append_bundle(write_bundle_dir(tmp_path / "s", by_judge(hand, SECOND)), warehouse)

    assert not unchanged.changed
    assert second.added["judgments"] == len(hand["judgments"])
    both = with_judgments(hand, hand["judgments"] + by_judge(hand, SECOND)["judgments"])
    reference = tmp_path / "reference.duckdb"
    load_bundle(write_bundle_dir(tmp_path / "both", both), reference)
    assert raw_tables(warehouse) == raw_tables(reference)


def test_cli_replace_judge(tmp_path, hand):
    warehouse = tmp_path / "qct2i.duckdb"
    second = write_bundle_dir(tmp_path / "s", by_judge(hand, SECOND))
    needs_append = run_main(["import", "--replace-judge", "second", str(second)], warehouse)
    assert needs_append.returncode == 2
    assert "--replace-judge only applies to an append import" in needs_append.stderr
    imported = run_main(["import", str(second)], warehouse)
    assert imported.returncode == 0, imported.stderr
    rejudged = write_bundle_dir(tmp_path / "r", by_judge(hand, {**SECOND, "judge_revision": "r3"}))

    refused = run_main(["import", "--append", str(rejudged)], warehouse)
    replaced = run_main(
        ["import", "--append", "--replace-judge", "second", str(rejudged)], warehouse
    )

    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "judge_id 'second') contradicts the stored row" in refused.stderr
    assert replaced.returncode == 0, replaced.stderr
    n = len(hand["judgments"])
    assert f"replaced the stored rows of judge second: judgments={n}" in replaced.stdout
    with duckdb.connect(str(Warehouse(warehouse).working), read_only=True) as con:
        revisions = con.sql("select distinct judge_revision from raw.judgments").fetchall()
    assert revisions == [("r3",)]


def write_bundle_dir(folder, tables, fmt="jsonl"):
    write_bundle(folder, tables, fmt)
    return folder
