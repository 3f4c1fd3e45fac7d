"""The inbox under the real daemon (issue 33, "Run for real"): `dagster dev` ticks the sensor every
30 s, queues each drop's run in the writer pool and launches it in a worker process of its own;
nothing here starts a run. The same cases in process: tests/dagster_defs/test_inbox.py."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from dagster_defs.inbox import READY
from tests.dagster_defs.test_inbox import (
    _as_generator,
    _digest,
    _drop,
    assert_m3_published_as_m2,
)
from tests.helpers import copy_warehouse, query, run_cli
from tests.ingestion.sources.test_tiif_release import write_tiif_fixture
from tests.qct2i.test_evaluate import _write_images
from tests.reporting.conftest import chromium  # noqa: F401 (the session's headless Chromium)
from tests.worlds.hand import hand_bundle_tables

pytestmark = [pytest.mark.e2e, pytest.mark.dbt]

# a sensor tick (30 s), the queue, a worker process loading the definitions, the import and a
# dbt build of the hand world: about two minutes on a shared 2-core machine
RUN_SECONDS = 8 * 60
SCREENSHOT = "docs/dagster_inbox_sensor.png"


def dismiss_first_visit_dialog(page) -> None:
    """The UI's newsletter dialog, shown once a browser profile, covers the page: skip it."""
    skip = page.get_by_role("button", name="Skip")
    try:
        skip.first.wait_for(timeout=10_000)
    except PlaywrightTimeout:  # not shown this time
        return
    skip.first.click()
    skip.first.wait_for(state="detached", timeout=10_000)


def test_the_daemon_refuses_a_broken_drop_publishes_a_good_one_and_takes_content_once(
    deployment,
    chromium,  # noqa: F811
):
    """Guards against a sensor that never runs by itself (off by default, not registered, failing
    its tick in the daemon's code server), a run that fails only out of process (a worker process
    without the inbox's or the warehouse's setting, the writer pool never released), a refusal
    that touches the published warehouse, a good drop not appended, and the same content imported
    twice. Then the UI's sensor page shows the sensor running and its ticks (the screenshot)."""
    warehouse, inbox = deployment.warehouse, deployment.inbox
    hand = hand_bundle_tables()
    published = _digest(warehouse)

    broken = _as_generator(hand, "m1", "m4")
    broken["judgments"][0]["question_id"] = "q99"  # a question the bundle does not hold
    _drop(inbox / "broken", broken)
    refusal = inbox / "rejected" / "broken" / "REFUSED.txt"
    deployment.wait_for("broken drop refused", refusal.exists, RUN_SECONDS)
    assert "q99" in refusal.read_text()
    assert _digest(warehouse) == published
    assert not warehouse.with_name(f"{warehouse.stem}.working.duckdb").exists()

    _drop(inbox / "m3", _as_generator(hand, "m2", "m3"))  # m2's evidence under a new id
    taken = inbox / "done" / "m3" / "TAKEN.json"
    deployment.wait_for("good drop published", taken.exists, RUN_SECONDS)
    record = json.loads(taken.read_text())
    assert record["imported"]
    assert_m3_published_as_m2(warehouse)

    after = _digest(warehouse)
    _drop(inbox / "again", _as_generator(hand, "m2", "m3"))  # the same content, another name
    again = inbox / "done" / "again" / "TAKEN.json"
    deployment.wait_for("the same content filed, not imported", again.exists, RUN_SECONDS)
    duplicate = json.loads(again.read_text())
    assert duplicate["duplicate_of_run"] == record["run_id"] and not duplicate["imported"]
    assert _digest(warehouse) == after

    page = chromium.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{deployment.url}/automation")
    sensor_page = page.locator('a[href$="/sensors/inbox"]').first.get_attribute("href")
    page.goto(deployment.url + sensor_page)
    page.get_by_text("Latest tick").first.wait_for(timeout=60_000)
    page.wait_for_load_state("networkidle")
    dismiss_first_visit_dialog(page)
    body = page.inner_text("body")
    assert "Running" in body and "inbox_intake" in body  # started by itself; its job
    assert "1 run requested" in body  # the ticks that started the two drops' runs
    page.screenshot(path=SCREENSHOT, full_page=True)
    page.close()


def _judgments_by_generator(warehouse) -> dict[str, int]:
    return dict(query(warehouse, "select model_id, count(*) from raw.judgments group by 1"))


def test_a_release_folder_dropped_is_converted_appended_and_published(deployment, tmp_path):
    """Guards against a release drop taken under the daemon but not converted, not appended (the
    hand world's generators lost) or never published. Expected: what `qct2i import-release tiif
    --append` of the same folder adds to a copy of the same warehouse (the command's route, in a
    process of its own), with every generator already there kept."""
    warehouse, inbox = deployment.warehouse, deployment.inbox
    before = _judgments_by_generator(warehouse)
    by_command = copy_warehouse(warehouse, tmp_path / "by-command")
    release = write_tiif_fixture(tmp_path / "tiif")
    done = run_cli(["import-release", "tiif", "--root", str(release), "--append"], by_command)
    assert done.returncode == 0, done.stderr[-2000:]
    expected = _judgments_by_generator(by_command.with_name("w.working.duckdb"))
    assert set(expected) - set(before)  # the release's own generators

    write_tiif_fixture(inbox / "tiif")
    (inbox / "tiif" / READY).write_text("")
    taken = inbox / "done" / "tiif" / "TAKEN.json"
    deployment.wait_for("release drop published", taken.exists, RUN_SECONDS)
    assert _judgments_by_generator(warehouse) == expected
    assert query(warehouse, "select count(*) from marts.fct_release_scores")[0][0] > 0


def test_an_images_folder_dropped_is_judged_read_and_published(deployment, tmp_path):
    """Guards against an images drop whose run cannot judge out of process (the worker without
    the profile's models), or that is published without every prompt drawn and judged. Expected
    by hand: the hand world's 4 prompts and 18 questions, the tiny judge answering "yes"."""
    warehouse, inbox = deployment.warehouse, deployment.inbox
    prompts = [p for (p,) in query(warehouse, "select prompt_id from raw.prompts order by 1")]
    hand_prompts = ["cA-en", "cA-zh", "cB-en", "cB-zh"]
    (inbox / "images").mkdir(exist_ok=True)
    folder = _write_images(inbox / "images" / "mine", hand_prompts)
    # the release's prompts are planned too (every prompt): draw them as well
    for prompt_id in sorted(set(prompts) - set(hand_prompts)):
        (folder / f"{prompt_id}.png").write_bytes((folder / "cA-en.png").read_bytes())
    (folder / READY).write_text("")
    taken = inbox / "done" / "images" / "mine" / "TAKEN.json"
    # the tiny judge and reader on the CPU, loaded in the run's own worker process
    deployment.wait_for("images drop judged and published", taken.exists, 2 * RUN_SECONDS)
    images = query(warehouse, "select count(*) from raw.images where model_id = 'mine'")
    assert images == [(len(prompts),)]
    answers = query(
        warehouse,
        "select j.answer, count(*) from raw.judgments j join raw.prompts p using (prompt_id) "
        "where j.model_id = 'mine' and p.prompt_id in ('cA-en', 'cA-zh', 'cB-en', 'cB-zh') "
        "group by 1",
    )
    assert answers == [("yes", 18)]
    board = "select count(*) from marts.fct_hcq_leaderboard where model_id = 'mine'"
    assert query(warehouse, board)[0][0] > 0
