"""Which build `qct2i build` plans (ingestion/store/build_inputs.py), without running dbt: the
hand world's evidence loaded and appended with the importer, the fingerprints read from the file,
the plan compared with what the change touched, worked out by hand."""

from __future__ import annotations

import duckdb
import pytest
import yaml

from ingestion.bundle import load_bundle
from ingestion.bundle.append import append_bundle
from ingestion.bundle.format import write_bundle
from ingestion.paths import PROJECT_ROOT
from ingestion.store.build_inputs import (
    BuildPlan,
    current_inputs,
    pending,
    plan_build,
    prepare_build,
    record_inputs,
    recorded_inputs,
)
from tests.worlds.hand import hand_bundle_tables

JUDGE = "default"


def _inputs(warehouse, build_vars=None, code="code-1"):
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return current_inputs(con, build_vars or {}, code)


def _record(warehouse, inputs):
    with duckdb.connect(str(warehouse)) as con:
        record_inputs(con, inputs)


def _benchmark_only(tables):
    """The hand world's prompts and questions, every other table empty."""
    return {name: rows if name in ("prompts", "questions") else [] for name, rows in tables.items()}


def _renamed(tables, model, new_model):
    """The hand world's rows of `model` as those of generator `new_model` (judgments, OCR)."""
    out = _benchmark_only(tables)
    for name in ("judgments", "transcriptions"):  # the hand world lists no generators
        out[name] = [{**r, "model_id": new_model} for r in tables[name] if r["model_id"] == model]
    return out


@pytest.fixture
def world(tmp_path):
    """The hand world imported and recorded as built; its tables and generators."""
    tables = hand_bundle_tables()
    write_bundle(tmp_path / "hand", tables)
    warehouse = tmp_path / "w.duckdb"
    load_bundle(tmp_path / "hand", warehouse)
    _record(warehouse, _inputs(warehouse))
    models = sorted({row["model_id"] for row in tables["judgments"]})
    return {"tables": tables, "warehouse": warehouse, "models": models, "root": tmp_path}


def _plan(warehouse, **kwargs):
    with duckdb.connect(str(warehouse), read_only=True) as con:
        recorded, (full, generators) = recorded_inputs(con), pending(con)
    return plan_build(recorded, _inputs(warehouse, **kwargs), full, generators)


def test_nothing_changed_is_an_incremental_build_of_no_generator(world):
    """Guards against a fingerprint that differs between two reads of the same evidence (every
    build would then be full, or rebuild generators that did not change)."""
    assert _plan(world["warehouse"]) == BuildPlan(False, (), "0 of 2 generators changed")


def test_an_appended_generator_alone_is_rebuilt(world):
    """Guards against an append that goes unseen (stale rows) or touches the others' rows."""
    model = world["models"][0]
    bundle = world["root"] / "new"
    write_bundle(bundle, _renamed(world["tables"], model, "newcomer"))
    append_bundle(bundle, world["warehouse"])
    plan = _plan(world["warehouse"])
    assert (plan.full, plan.generators) == (False, ("newcomer",))


def test_a_replaced_generator_alone_is_rebuilt(world):
    """`--replace-model M` with one answer flipped: M, and only M, is rebuilt."""
    model, other = world["models"]
    tables = _renamed(world["tables"], model, model)
    flipped = tables["judgments"][0]
    flipped["answer"] = "no" if flipped["answer"] == "yes" else "yes"
    write_bundle(world["root"] / "replaced", tables)
    append_bundle(world["root"] / "replaced", world["warehouse"], replace_models=[model])
    plan = _plan(world["warehouse"])
    assert (plan.full, plan.generators) == (False, (model,))
    assert other not in plan.generators


def test_a_replaced_official_judge_builds_in_full(world):
    """`--replace-judge` of the official judge with one answer changed touches every generator
    that judge answered: the build is full (no generator's rows stand)."""
    tables = _benchmark_only(world["tables"])
    tables["judgments"] = [dict(r) for r in world["tables"]["judgments"]]
    for model in world["models"]:  # one answer flipped per generator
        row = next(r for r in tables["judgments"] if r["model_id"] == model)
        row["answer"] = "no" if row["answer"] == "yes" else "yes"
    write_bundle(world["root"] / "rejudged", tables)
    append_bundle(world["root"] / "rejudged", world["warehouse"], replace_judges=[JUDGE])
    assert _plan(world["warehouse"]).full


def test_a_second_judge_on_one_generator_rebuilds_that_generator(world):
    """A second judge's judgments of one generator reach its failure examples (every judge's
    word): that generator is rebuilt, the other is not."""
    model, _ = world["models"]
    tables = _benchmark_only(world["tables"])
    judged = [r for r in world["tables"]["judgments"] if r["model_id"] == model]
    tables["judgments"] = [{**r, "judge_id": "second"} for r in judged]
    write_bundle(world["root"] / "second", tables)
    append_bundle(world["root"] / "second", world["warehouse"])
    assert _plan(world["warehouse"]).generators == (model,)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"code": "code-2"}, "the code changed since the last build"),
        ({"build_vars": {"official_judge": "x"}}, "the vars changed since the last build"),
    ],
)
def test_code_or_vars_changed_builds_in_full(world, change, reason):
    """A changed model or method (code fingerprint) or dbt var changes every row: full."""
    assert _plan(world["warehouse"], **change) == BuildPlan(True, (), reason)


def test_no_record_builds_in_full(world):
    """A warehouse published before this code, or by Dagster (no record), builds in full."""
    _record(world["warehouse"], None)
    assert _plan(world["warehouse"]).full


def test_a_build_that_did_not_publish_stays_pending(world):
    """Guards the kill -9 case: a generator being rebuilt when the build died is rebuilt by the
    next build even though its evidence is back to the recorded one, and a full build that died
    makes the next one full; a publish clears both."""
    model = world["models"][0]
    warehouse = world["warehouse"]
    with duckdb.connect(str(warehouse)) as con:
        con.execute("create table build_state.pending (model_id varchar)")
        con.execute("insert into build_state.pending values (?)", [model])
    assert _plan(warehouse).generators == (model,)
    with duckdb.connect(str(warehouse)) as con:
        con.execute("insert into build_state.pending values (null)")
    assert _plan(warehouse).full
    _record(warehouse, _inputs(warehouse))
    assert _plan(warehouse) == BuildPlan(False, (), "0 of 2 generators changed")


def test_prepare_build_commits_the_pending_generators(world, monkeypatch):
    """What dbt is about to rebuild is in the file before dbt starts (the models read it)."""
    monkeypatch.setattr("ingestion.store.build_inputs.code_fingerprint", lambda: "code-1")
    model = world["models"][1]
    tables = _renamed(world["tables"], model, model)
    tables["transcriptions"] = tables["transcriptions"][1:]  # one transcription fewer
    write_bundle(world["root"] / "less", tables)
    append_bundle(world["root"] / "less", world["warehouse"], replace_models=[model])
    plan, _ = prepare_build(world["warehouse"], {})
    assert plan.generators == (model,)
    with duckdb.connect(str(world["warehouse"]), read_only=True) as con:
        assert pending(con) == (False, {model})
    full, _ = prepare_build(world["warehouse"], {}, full=True)
    assert full == BuildPlan(True, (), "--full")


# The per-generator models (docs/warehouse.md, "Incremental builds") and the staging view of the
# judgments, whose rows per generator are that generator's evidence: an incremental build keeps
# every other generator's rows as the last published build left them.
_PER_GENERATOR = {
    "int_official_judgments",
    "int_question_validity",
    "int_text_targets",
    "int_text_match",
    "int_prompt_sufficient_stats",
    "int_root_contexts",
    "int_coupling_prompt_effects",
    "int_coupling_draws",
    "fct_question_records",
    "fct_component_exactness",
    "fct_failure_examples",
    "stg_judgments",
}


def _narrowed_tests():
    """(model, the test's key expression) of every data test configured `where:
    rebuilt_generators_only` in the dbt project's yml files."""
    narrowed = []
    for path in sorted((PROJECT_ROOT / "models").rglob("*.yml")):
        for model in yaml.safe_load(path.read_text(encoding="utf-8")).get("models", []):
            for test in model.get("data_tests", []):
                (arguments,) = test.values() if isinstance(test, dict) else ({},)
                if (arguments.get("config") or {}).get("where") == "rebuilt_generators_only":
                    narrowed.append((model["name"], arguments.get("column_name", "")))
    return narrowed


def test_an_incremental_build_narrows_only_tests_local_to_a_generator():
    """Guards `where: rebuilt_generators_only`: a test narrowed to the rebuilt generators is
    sound only on a model whose other generators' rows the build keeps (a cross-generator model
    rebuilds them all, so narrowing its test would leave rebuilt rows untested) and with a key
    holding `model_id` (else two generators' rows could collide unseen). Also guards against the
    narrowing being dropped from the uniqueness tests of the per-generator tables, most of an
    incremental build's test time at paper scale."""
    narrowed = _narrowed_tests()
    models = {model for model, _ in narrowed}
    assert models <= _PER_GENERATOR
    assert all(key.startswith("model_id || '/'") for _, key in narrowed)
    assert models == {
        "stg_judgments",
        "int_official_judgments",
        "int_question_validity",
        "int_prompt_sufficient_stats",
        "int_coupling_prompt_effects",
        "int_coupling_draws",
        "int_root_contexts",
        "fct_question_records",
    }
