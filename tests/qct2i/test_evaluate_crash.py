"""kill -9 during `qct2i evaluate` (issue 25), then the same command again: 0 images lost, 0
duplicated, 0 questions judged twice, and the build publishes the generator's rows.

One evaluation on a copy of the small demo warehouse, stopped three times before it is let
finish, each run resuming what the one before it left (one chain, so one import and one build
for the three crashes):

1. a crash injected after the 2nd image (`QCT2I_FAIL_AFTER_IMAGES`, an exception in the
   generation asset: exit 2), which leaves PNGs drawn whose rows were never appended;
2. kill -9 of the whole process group while images are being drawn (images.jsonl holds more
   rows than the first run left, fewer than the plan has prompts);
3. kill -9 while images are being judged (judgments.jsonl holds some rows, not all), one image
   per judge call and append (`QCT2I_JUDGE_CHUNK_IMAGES=1`) so that judging takes several steps;
4. the same command to completion.

And `--replace` killed while it removes the old evaluation's folder (in-process, the kill stood
for by an exception in the removal): what is left is not a folder that resumes without its plan.

The expected counts come from the plan's own files (prompts.jsonl, questions.jsonl) and from SQL
on the warehouse, never from the code under test. Generator, judge and OCR reader are the tiny
models of test_evaluate.py (`tiny_sd`, `tiny_models`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import QCT2I, cli_env, copy_warehouse, query, run_cli

MODEL = "tiny-killed"
FAIL_AFTER = 2  # the injected crash: after this many images of the first run (mid-batch)
KILL_TIMEOUT_S = 300  # a run that never reaches its kill point fails the test after this


def complete_rows(path: Path) -> list[dict]:
    """The rows of a JSONL file's complete lines (a torn last line, cut by a kill, left out)."""
    if not path.exists():
        return []
    *lines, _tail = path.read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line.strip()]


def whole_rows(path: Path) -> list[dict]:
    """Every line of a finished file: each one whole and parseable, the file ending in a
    newline (no torn line left behind by a kill)."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n"), f"{path}: a torn last line"
    return [json.loads(line) for line in text.splitlines()]


def kill_9_when(process: subprocess.Popen, ready: Callable[[], bool], log: Path) -> None:
    """Poll until `ready()`, then SIGKILL the process group of `process` (the console script
    and anything it started)."""
    deadline = time.monotonic() + KILL_TIMEOUT_S
    while not ready():
        if process.poll() is not None:
            pytest.fail(
                f"exit {process.returncode} before the kill point:\n{log.read_text()[-3000:]}"
            )
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            pytest.fail(f"no kill point in {KILL_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.02)
    os.killpg(os.getpgid(process.pid), signal.SIGKILL)
    assert process.wait(timeout=60) == -signal.SIGKILL


def start(args: list[str], warehouse: Path, log: Path, env: dict[str, str]) -> subprocess.Popen:
    with log.open("w") as out:  # the child keeps its own descriptor
        return subprocess.Popen(
            [QCT2I, *args],
            env=cli_env(warehouse, **env, PYTHONUNBUFFERED="1"),  # its lines before the kill
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, killed whole
        )


@pytest.fixture
def evaluation(small_demo, tiny_sd, tiny_models, tmp_path) -> dict:
    warehouse = copy_warehouse(small_demo[0], tmp_path / "warehouse")
    args = ["evaluate", MODEL, "--pipeline-class", "StableDiffusionPipeline"]
    args += ["--weights", str(tiny_sd), "--budget", "0.2"]
    args += ["--steps", "2", "--width", "32", "--height", "32"]
    env = {
        "QCT2I_TINY_MODELS": str(tiny_models),
        "QCT2I_ML_PROFILE": "cpu",
        "QCT2I_JUDGE_CHUNK_IMAGES": "1",
    }
    folder = warehouse.parent / "evaluations" / MODEL
    return {"warehouse": warehouse, "args": args, "env": env, "folder": folder, "logs": tmp_path}


def test_killed_while_drawing_and_while_judging_then_rerun_loses_and_repeats_nothing(evaluation):
    warehouse, args, env = evaluation["warehouse"], evaluation["args"], evaluation["env"]
    folder, logs = evaluation["folder"], evaluation["logs"]
    images_file, judgments_file = folder / "images.jsonl", folder / "judgments.jsonl"

    # 1. the injected crash: the plan written, 2 images drawn, their batch not recorded
    crashed = run_cli(args, warehouse, **env, QCT2I_FAIL_AFTER_IMAGES=str(FAIL_AFTER))
    assert crashed.returncode == 2, crashed.stderr[-3000:]
    assert f"QCT2I_FAIL_AFTER_IMAGES={FAIL_AFTER}: crashing after {FAIL_AFTER} images" in (
        crashed.stderr
    )
    planned = [row["prompt_id"] for row in whole_rows(folder / "prompts.jsonl")]
    questions = whole_rows(folder / "questions.jsonl")
    assert len(planned) > FAIL_AFTER and {q["prompt_id"] for q in questions} == set(planned)
    recorded = len(complete_rows(images_file))
    drawn = list((folder / "images").rglob("*.png"))
    assert recorded < FAIL_AFTER == len(drawn)  # drawn PNGs whose rows were never appended

    # 2. kill -9 while drawing: more rows than the crash left, fewer than the plan's prompts
    log = logs / "killed-drawing.log"
    process = start(args, warehouse, log, env)
    kill_9_when(process, lambda: recorded < len(complete_rows(images_file)) < len(planned), log)
    assert f"resuming {folder}" in log.read_text()
    assert len(complete_rows(images_file)) < len(planned), "the kill came after the drawing"
    assert not judgments_file.exists()

    # 3. kill -9 while judging: some of the plan's questions answered, not all
    log = logs / "killed-judging.log"
    process = start(args, warehouse, log, env)
    kill_9_when(process, lambda: 0 < len(complete_rows(judgments_file)) < len(questions), log)
    assert len(complete_rows(judgments_file)) < len(questions), "the kill came after the judging"
    assert len(complete_rows(images_file)) == len(planned)  # the drawing had finished

    # 4. the same command to completion: resumed, imported and built
    done = run_cli(args, warehouse, **env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert f"resuming {folder}" in done.stdout
    assert f"published {warehouse}" in done.stdout

    # every planned prompt has exactly one image row, and its PNG (0 lost, 0 duplicated)
    images = whole_rows(images_file)
    assert Counter(row["prompt_id"] for row in images) == Counter(planned)
    assert len({row["image_id"] for row in images}) == len(images) == len(planned)
    for row in images:
        assert (folder / row["path"]).is_file(), row["path"]
    assert not list(folder.rglob("*.partial"))  # no half-written file left behind
    assert len(list((folder / "images").rglob("*.png"))) == len(planned)
    (rows, distinct, prompts) = query(
        warehouse,
        "select count(*), count(distinct image_id), count(distinct prompt_id) "
        f"from raw.images where model_id = '{MODEL}'",
    )[0]
    assert rows == distinct == prompts == len(planned)
    stored = query(warehouse, f"select prompt_id from raw.images where model_id = '{MODEL}'")
    assert sorted(p for (p,) in stored) == sorted(planned)

    # every question of every planned prompt judged once (0 judged twice, 0 lost)
    judgments = whole_rows(judgments_file)
    keys = Counter(
        (r["prompt_id"], r["model_id"], r["question_id"], r["judge_id"]) for r in judgments
    )
    assert max(keys.values()) == 1
    judges = {r["judge_id"] for r in judgments}
    assert judges == {"default"}
    assert set(keys) == {(q["prompt_id"], MODEL, q["question_id"], "default") for q in questions}
    (judged, distinct, expected) = query(
        warehouse,
        f"select (select count(*) from raw.judgments where model_id = '{MODEL}'), "
        "(select count(distinct (prompt_id, question_id, judge_id)) from raw.judgments "
        f"where model_id = '{MODEL}'), "
        "(select count(*) from raw.questions q join raw.images i using (prompt_id) "
        f"where i.model_id = '{MODEL}')",
    )[0]
    assert judged == distinct == expected == len(questions)

    # one generators row, the one measured by the first run, kept by the reruns
    (generator,) = whole_rows(folder / "generators.jsonl")
    assert generator["model_id"] == MODEL and generator["cost_source"] == "measured"
    assert query(
        warehouse, f"select cost_gpu_s_per_mp from raw.generators where model_id = '{MODEL}'"
    ) == [(generator["cost_gpu_s_per_mp"],)]

    # the build published the generator's rows
    scopes = query(
        warehouse,
        f"select language_scope from marts.fct_subset_estimates where model_id = '{MODEL}' "
        "order by 1",
    )
    assert scopes == [("bilingual",), ("en",), ("zh",)]
    board = query(
        warehouse,
        f"select distinct evaluation from marts.fct_hcq_leaderboard where model_id = '{MODEL}'",
    )
    assert board == [("subset",)]


class _Killed(BaseException):
    """Stands for a kill -9 landing in the middle of a removal."""


def test_a_replace_killed_while_removing_the_old_folder_leaves_none_that_resumes(
    small_demo, tmp_path, monkeypatch
):
    from dagster_defs import evaluation as evaluate

    warehouse = copy_warehouse(small_demo[0], tmp_path)
    first = evaluate.Request(
        model_id="tiny-replaced",
        source="pipeline",
        pipeline_class="StableDiffusionPipeline",
        weights="first",
    )
    folder, started = evaluate.start_or_resume(first, warehouse, replace=False)
    assert started and (folder / "prompts.jsonl").is_file()

    real_rmtree = shutil.rmtree

    def killed_midway(path, *args, **kwargs):
        if Path(path) == folder:  # the plan's prompts are gone when the kill lands
            (folder / "prompts.jsonl").unlink()
            raise _Killed
        real_rmtree(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", killed_midway)
    with pytest.raises(_Killed):
        evaluate.start_or_resume(dataclasses.replace(first, weights="second"), warehouse, True)
    monkeypatch.undo()

    # the first request again: it starts over rather than resume a folder without its plan
    folder, started = evaluate.start_or_resume(first, warehouse, replace=False)
    assert started
    assert (folder / "prompts.jsonl").is_file() and (folder / "evaluation.json").is_file()
