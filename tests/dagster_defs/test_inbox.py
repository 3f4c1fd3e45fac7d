"""The inbox sensor (dagster_defs/inbox.py; docs/deployment.md), through Dagster's own machinery: a
sensor tick (`build_sensor_context` on an instance) and the runs it requests, executed in process
on that instance against a copy of the hand world. One dbt build in all (the good drop's)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import dagster as dg
import pytest

from dagster_defs.inbox import (
    READY,
    evaluate_inbox,
    inbox_intake_job,
    inbox_sensor,
    is_complete,
    kind_of,
)
from ingestion.bundle.format import write_bundle
from ingestion.sources.releases import format_of
from tests.helpers import copy_warehouse, query
from tests.worlds.hand import hand_bundle_tables

pytestmark = pytest.mark.dbt  # the good drop's run builds the warehouse


def _drop(folder: Path, tables: dict, ready: bool = True) -> Path:
    write_bundle(folder, tables, "jsonl")
    if ready:
        (folder / READY).write_text("")
    return folder


def _as_generator(tables: dict, source: str, new: str) -> dict:
    """The hand world's rows of generator `source` under the id `new` (questions and prompts
    as they are)."""
    renamed = {
        name: [{**row, "model_id": new} for row in rows if row.get("model_id") == source]
        for name, rows in tables.items()
        if name in ("judgments", "transcriptions")
    }
    return {"prompts": tables["prompts"], "questions": tables["questions"], **renamed}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_m3_published_as_m2(warehouse: Path) -> None:
    """The drop of m2's evidence under the id m3 reached the published warehouse: 18 judgments a
    generator (the hand world's 7 + 2 questions, in two languages) and m3 scored as m2 in every
    scope."""
    counts = query(warehouse, "select model_id, count(*) from raw.judgments group by 1 order by 1")
    assert counts == [("m1", 18), ("m2", 18), ("m3", 18)]
    scores = query(
        warehouse,
        "select language_scope, model_id, hcq_total from marts.fct_hcq_leaderboard "
        "where model_id in ('m2', 'm3') order by 1, 2",
    )
    assert scores and all(a[2] == b[2] for a, b in zip(scores[::2], scores[1::2], strict=True))


def _tick(instance: dg.DagsterInstance) -> list[dg.RunRequest]:
    result = inbox_sensor().evaluate_tick(dg.build_sensor_context(instance=instance))
    return list(result.run_requests or [])


def _run(instance: dg.DagsterInstance, request: dg.RunRequest) -> dg.ExecuteInProcessResult:
    """The requested run as the daemon would launch it: its config, its tags and its run key
    (the job needs no resource of the definitions: its op runs the pipeline's own)."""
    tags = {**request.tags, "dagster/run_key": request.run_key}
    return inbox_intake_job.execute_in_process(
        run_config=request.run_config, instance=instance, tags=tags, raise_on_error=False
    )


def _inbox_beside(warehouse: Path, monkeypatch) -> tuple[Path, Path]:
    inbox = warehouse.parent / "inbox"
    inbox.mkdir()
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("QCT2I_INBOX", str(inbox))
    monkeypatch.delenv("QCT2I_INBOX_QUIET_S", raising=False)
    return warehouse, inbox


@pytest.fixture()
def world(hand_published, tmp_path, monkeypatch) -> tuple[Path, Path]:
    """(published warehouse, inbox): a copy of the hand world."""
    return _inbox_beside(copy_warehouse(hand_published, tmp_path / "warehouse"), monkeypatch)


@pytest.fixture()
def bare(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """(published warehouse, inbox) for drops refused before any import: the published file
    is a stand-in that only its bytes' digest is asked of."""
    (tmp_path / "warehouse").mkdir()
    published = tmp_path / "warehouse" / "w.duckdb"
    published.write_bytes(b"published")
    return _inbox_beside(published, monkeypatch)


def test_a_good_drop_is_published_a_broken_one_refused_and_the_same_content_taken_once(world):
    """Guards against: a drop taken before READY; a refused bundle touching the published
    warehouse or leaving a working copy the next build would start from; a good drop not
    appended (the hand world's generator m2 dropped again as m3 must score exactly as m2, by
    the same evidence, with m1 and m2 kept); the same content imported twice."""
    warehouse, inbox = world
    hand = hand_bundle_tables()
    _drop(inbox / "m3", _as_generator(hand, "m2", "m3"))
    broken = _as_generator(hand, "m1", "m4")
    broken["judgments"][0]["question_id"] = "q99"  # a question the bundle does not hold
    _drop(inbox / "broken", broken)
    _drop(inbox / "unfinished", _as_generator(hand, "m1", "m5"), ready=False)
    instance = dg.DagsterInstance.ephemeral()
    published = _digest(warehouse)

    requests = {r.tags["qct2i/inbox"]: r for r in _tick(instance)}
    assert sorted(requests) == ["broken", "m3"]  # not `unfinished`: no READY in it
    assert _tick(instance)  # nothing ran yet: asked again (the daemon skips a known run key)

    refused = _run(instance, requests["broken"])
    assert not refused.success
    reason = (inbox / "rejected" / "broken" / "REFUSED.txt").read_text()
    assert reason.startswith("bundle ") and "q99" in reason  # the importer's words, no class name
    assert not (inbox / "broken").exists()
    assert _digest(warehouse) == published
    assert not warehouse.with_name(f"{warehouse.stem}.working.duckdb").exists()

    taken = _run(instance, requests["m3"])
    assert taken.success
    record = json.loads((inbox / "done" / "m3" / "TAKEN.json").read_text())
    assert record["run_id"] == taken.run_id and record["imported"]
    assert_m3_published_as_m2(warehouse)

    after = _digest(warehouse)
    _drop(inbox / "again", _as_generator(hand, "m2", "m3"))  # the same content, another name
    assert _tick(instance) == []
    duplicate = json.loads((inbox / "done" / "again" / "TAKEN.json").read_text())
    assert duplicate["duplicate_of_run"] == taken.run_id and not duplicate["imported"]
    assert _digest(warehouse) == after


def test_releases_that_cannot_be_imported_and_unknown_folders_are_refused_without_a_build(bare):
    """Guards against a OneIG release (questions only), a TIIF release its converter refuses or
    a folder of nothing known being imported, or failing with no reason in rejected/."""
    warehouse, inbox = bare
    tiif = inbox / "tiif"
    (tiif / "eval-results" / "testmini_subset_eval_results").mkdir(parents=True)
    (tiif / "data" / "testmini_prompts").mkdir(parents=True)
    # a dimension seeds/tiif_dimension_map.csv does not map: the conversion refuses the release
    (tiif / "data" / "testmini_prompts" / "smell_prompts.jsonl").write_text("{}\n")
    (tiif / READY).write_text("")
    oneig = inbox / "oneig"
    (oneig / "scripts" / "alignment" / "Q_D").mkdir(parents=True)
    (oneig / "OneIG-Bench.csv").write_text("category,id,prompt_en\n")
    (oneig / READY).write_text("")
    (inbox / "notes").mkdir()
    (inbox / "notes" / "readme.txt").write_text("hello")
    (inbox / "notes" / READY).write_text("")
    instance, published = dg.DagsterInstance.ephemeral(), _digest(warehouse)
    for request in _tick(instance):
        assert not _run(instance, request).success
    assert "no answers" in (inbox / "rejected" / "oneig" / "REFUSED.txt").read_text()
    tiif_reason = (inbox / "rejected" / "tiif" / "REFUSED.txt").read_text()
    assert tiif_reason.startswith("TIIF-Bench release refused") and "'smell'" in tiif_reason
    assert "not a bundle" in (inbox / "rejected" / "notes" / "REFUSED.txt").read_text()
    assert _digest(warehouse) == published


@pytest.mark.parametrize(
    ("paths", "expected"),
    [
        # the layouts docs/releases.md gives for each clone
        (["data/testmini_prompts/", "eval-results/testmini_subset_eval_results/"], "tiif"),
        (["dsg/data/dsg-1k-anns.csv", "vqa_answers_release/"], "dsg"),
        (["OneIG-Bench.csv", "scripts/alignment/Q_D/"], "oneig"),
        (["data/testmini_prompts/"], None),  # half a TIIF clone: no results
        (["questions.jsonl"], "bundle"),
        (["manifest.json"], "bundle"),
        (["readme.txt"], None),
    ],
)
def test_a_drop_is_told_by_its_layout(tmp_path, paths, expected):
    """Guards against a release taken for a bundle (or the reverse), or half a release taken."""
    for path in paths:
        target = tmp_path / path
        if path.endswith("/"):
            target.mkdir(parents=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("")
    assert kind_of(tmp_path) == expected
    assert format_of(tmp_path) == (expected if expected != "bundle" else None)


def test_the_sensor_waits_while_the_warehouse_has_unpublished_changes(bare, monkeypatch):
    """Guards against an intake built on top of someone's unbuilt import (it would publish it,
    or be refused for it); and against the setting that turns the sensor off being ignored."""
    warehouse, inbox = bare
    _drop(inbox / "m3", _as_generator(hand_bundle_tables(), "m2", "m3"))
    warehouse.with_name(f"{warehouse.stem}.working.duckdb").write_bytes(b"")
    result = evaluate_inbox(dg.build_sensor_context(instance=dg.DagsterInstance.ephemeral()))
    assert isinstance(result, dg.SkipReason) and "unpublished" in result.skip_message
    assert inbox_sensor().default_status == dg.DefaultSensorStatus.RUNNING
    monkeypatch.setenv("QCT2I_INBOX_SENSOR", "off")
    assert inbox_sensor().default_status == dg.DefaultSensorStatus.STOPPED


def test_the_definitions_hold_the_sensor_and_its_job():
    """Guards against the sensor written but not loaded (`dagster dev` would never run it)."""
    from dagster_defs.definitions import defs

    loaded = defs()
    assert loaded.get_sensor_def("inbox").job_name == "inbox_intake"
    assert loaded.resolve_job_def("inbox_intake").name == "inbox_intake"


def test_a_folder_without_ready_is_complete_only_after_the_quiet_period(tmp_path):
    """Guards against a half-copied folder taken: without READY, a folder is complete only when
    a quiet period is set and its newest file is older than it."""
    folder = tmp_path / "drop"
    folder.mkdir()
    (folder / "questions.jsonl").write_text("")
    (folder / "judgments.jsonl").write_text("")
    os.utime(folder / "questions.jsonl", (1_000.0, 1_000.0))
    os.utime(folder / "judgments.jsonl", (1_500.0, 1_500.0))  # the newest file
    assert not is_complete(folder, None, now=10_000.0)  # no quiet period: READY only
    assert not is_complete(folder, 600.0, now=2_099.0)  # 599 s after the newest change
    assert is_complete(folder, 600.0, now=2_100.0)
    (folder / READY).write_text("")
    assert is_complete(folder, None, now=0.0)


def test_the_first_tick_makes_the_inbox(tmp_path, monkeypatch):
    """Guards against `make dev` on a fresh clone watching a folder nobody made."""
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(tmp_path / "warehouse" / "w.duckdb"))
    monkeypatch.delenv("QCT2I_INBOX", raising=False)
    result = evaluate_inbox(dg.build_sensor_context(instance=dg.DagsterInstance.ephemeral()))
    assert isinstance(result, dg.SkipReason)
    assert (tmp_path / "warehouse" / "inbox").is_dir()  # beside the warehouse by default
