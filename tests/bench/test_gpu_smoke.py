"""`make gpu-smoke --dry-run` (bench/gpu_smoke.py) on CPU with tiny models: every step of the GPU
script runs its real code path and the JSON says what each found."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from bench import gpu_smoke

STEPS = {
    "environment",
    "generator:flux2-klein-4b",
    "generator:z-image-turbo",
    "dagster_crash_resume",
    "judge_transformers",
    "judge_vllm",
    "ocr",
    "question_construction",
}
TINY_MP = 32 * 32 / 1e6  # the tiny draws are 32 x 32


@pytest.fixture(scope="module")
def smoke(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("gpu_smoke")
    assert gpu_smoke.main(["--dry-run", "--out", str(folder), "--work", str(folder / "w")]) == 0
    return json.loads((folder / "gpu_smoke.json").read_text())


def _registry_rows() -> dict[str, dict]:
    with (gpu_smoke.PROJECT_ROOT / "seeds" / "generators.csv").open(newline="") as f:
        return {r["model_id"]: r for r in csv.DictReader(f)}


def test_every_step_ran_or_says_why_not(smoke):
    assert smoke["mode"] == "dry-run"
    assert set(smoke["steps"]) == STEPS
    for name, step in smoke["steps"].items():
        assert step["status"] in ("ok", "skipped"), (name, step)
        if step["status"] == "skipped":
            assert step["reason"].strip(), name
    assert smoke["forkserver_s"] > 0  # the step server started before the first step's cap
    vllm = smoke["steps"]["judge_vllm"]
    if smoke["steps"]["environment"]["versions"]["vllm"] is None:
        assert vllm["status"] == "skipped" and "vllm" in vllm["reason"]


@pytest.mark.parametrize("model_id", ["flux2-klein-4b", "z-image-turbo"])
def test_generators_batch_1_and_batch_4_draw_the_same_images(smoke, model_id):
    step = smoke["steps"][f"generator:{model_id}"]
    assert step["pipeline_class"] == _registry_rows()[model_id]["pipeline_class"]
    assert step["dtype_expected"] == step["dtype_loaded"] == "float32"  # the CPU dtype
    assert step["offload"] is False  # the decision made at load (a CPU never offloads)
    # the seeds are the (concept, generator) seeds of concepts s01..s04 (s00 is the warm-up)
    expected = [
        int.from_bytes(hashlib.sha256(f"s{i:02d}|{model_id}".encode()).digest()[:4], "big")
        & 0x7FFFFFFF
        for i in range(1, 5)
    ]
    assert [s["seed"] for s in step["seeds"]] == expected
    for seed in step["seeds"]:
        assert (seed["batch1"] == seed["batch4"]) == (seed["max_pixel_difference"] == 0)
        assert seed["max_pixel_difference"] <= 1  # float32 GEMMs blocked by batch size
    assert step["batch_hashes_equal"] == all(s["batch1"] == s["batch4"] for s in step["seeds"])
    # GPU-s/MP from the four timed batch-1 draws alone (CPU: one device), warm-up excluded
    assert step["gpu_s_per_mp"] == pytest.approx(step["batch1_latency_s"] / TINY_MP)
    assert step["warmup_excluded"] is True and step["warmup_latency_s"] > 0


def test_a_killed_materialisation_resumes_with_nothing_lost_or_twice(smoke):
    step = smoke["steps"]["dagster_crash_resume"]
    assert step["planned"] == 6 and step["killed_with_signal"] == 9  # SIGKILL
    assert step["rows_at_kill"] == 2  # batch 1 stored, batch 2 drawn and lost with the process
    assert (step["resume_success"], step["resume_skipped"], step["resume_drawn"]) == (True, 2, 4)
    assert (step["lost"], step["duplicated"]) == (0, 0)
    assert step["png_files_match_rows"] is True


def test_judge_ocr_and_writer_count_every_item(smoke):
    judge = smoke["steps"]["judge_transformers"]
    assert judge["questions"] == 20 * 14
    assert judge["answered"] + judge["missing_with_reason"] == 20 * 14
    assert judge["p_yes_within_0_1"] is True
    ocr = smoke["steps"]["ocr"]
    assert ocr["transcribed"] == ocr["rows_written"] == 5
    assert ocr["ok"] + ocr["unavailable_truncated"] + ocr["unavailable_unparseable"] == 5
    writer = smoke["steps"]["question_construction"]
    assert writer["planned"] == 5 and writer["accepted"] + writer["rejected"] == 5
    assert sum(writer["rejection_reasons"].values()) >= writer["rejected"]


# The jobs of the step-runner tests: run_step runs a job in a child process, by name.
def broken():
    raise ValueError("no such checkpoint")


def missing():
    raise gpu_smoke.StepSkipped("vllm is not installed in this environment")


def slow():
    time.sleep(30)
    return {}


def start_a_process(pid_file: str, then_sleep_s: float) -> dict:
    """What vLLM's engine core or a Dagster run is to a step: a process the step starts."""
    started = subprocess.Popen(["sleep", "600"])
    Path(pid_file).write_text(str(started.pid))
    time.sleep(then_sleep_s)
    return {"started": started.pid}


def _run_one(job, cap_s=30.0, budget_s=60.0) -> dict:
    results = {"steps": {}}
    gpu_smoke.run_step("x", cap_s, job, results, time.monotonic() + budget_s)
    return results["steps"]["x"]


def _job(name: str, *args) -> tuple[str, tuple]:
    return f"{__name__}:{name}", args


def test_a_failing_step_is_recorded_and_the_run_goes_on():
    failed = _run_one(_job("broken"))
    assert failed["status"] == "failed" and failed["error"] == "ValueError: no such checkpoint"
    assert _run_one(_job("missing")) | {"seconds": 0} == {
        "cap_s": 30.0,
        "status": "skipped",
        "reason": "vllm is not installed in this environment",
        "seconds": 0,
    }
    spent = _run_one(_job("slow"), budget_s=0)
    assert spent == {"status": "skipped", "reason": "the run's time budget is spent"}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (killed, not yet reaped by its parent, which is gone too) is not running
    with contextlib.suppress(FileNotFoundError):
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    return False


@pytest.mark.parametrize(("sleep_s", "status"), [(60.0, "failed"), (0.0, "ok")])
def test_a_step_is_killed_at_its_cap_with_every_process_it_started(tmp_path, sleep_s, status):
    """A step past its cap is killed from outside, whatever it is doing (a sleep here, a C-level
    load or vLLM's start-up there), and so is the process it started; a step that ends leaves
    none running either, so the next step finds the device empty."""
    pid_file = tmp_path / "pid"
    began = time.monotonic()
    record = _run_one(_job("start_a_process", str(pid_file), sleep_s), cap_s=1.5)
    assert record["status"] == status, record
    if status == "failed":
        assert record["error"] == "killed at its time cap (1.5 s)"
        assert time.monotonic() - began < 30  # not the 60 s the step would have taken
    started = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _alive(started) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(started)


def test_the_default_plans_caps_fit_its_budget(tmp_path):
    config = gpu_smoke.config_for(False, tmp_path / "smoke.json", tmp_path / "work")
    caps = [cap for _, cap, _ in gpu_smoke.steps(config)]
    assert len(caps) == 8 and sum(caps) <= config.budget_s == gpu_smoke.GPU_BUDGET_S
