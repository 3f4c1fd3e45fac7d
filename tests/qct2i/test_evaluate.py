"""`qct2i evaluate` (issue 25): a new generator from a checkpoint folder to its leaderboard rows in
one command, on a demo warehouse, through the console script; a rerun that changes nothing and
says so; and the refusals, each with its exact message (in-process: no model is loaded).

The first run has a pseudo-terminal as its stderr, as a person's would be: each step's progress
bar shows there, and stdout holds the steps with their counts, the import's and the build's lines
(not dbt's log, nor Dagster's event lines) and the rows; the rerun's output is piped, so its
progress is plain lines.

The generator is the tiny Stable Diffusion built in code (random weights, saved, loaded by the
real `StableDiffusionPipeline`); the judge and the OCR reader are the cpu profile's tiny
Qwen3-VL, whose OCR answer is forced (tests/ingestion/backends/forced_answers.py) so a reading
ends at once."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

import qct2i.dbt_runner as dbt_runner
from qct2i.cli import cmd_build
from tests.helpers import copy_warehouse, query, run_cli, run_cli_on_a_terminal, run_main
from tests.ingestion.backends.forced_answers import force_answer

MODEL = "tiny-new"
OCR_ANSWER = '{"blocks": ["x"]}'
SMALL = ["--steps", "2", "--width", "32", "--height", "32"]
UNITS = ("images drawn", "images judged", "images read")  # what the progress counts


@pytest.fixture(scope="module")
def tiny_models(tiny_vl, tmp_path_factory) -> Path:
    """QCT2I_TINY_MODELS for the cpu profile: the tiny Qwen3-VL, its OCR answer forced."""
    root = tmp_path_factory.mktemp("tiny-models")
    shutil.copytree(tiny_vl, root / "qwen3_vl")
    force_answer(root / "qwen3_vl", OCR_ANSWER)
    return root


@pytest.fixture(scope="module")
def evaluated(small_demo, tiny_sd, tiny_models, tmp_path_factory):
    """(warehouse, args, stdout, what its terminal showed): a copy of the small demo warehouse
    (tests/conftest.py) after `qct2i evaluate tiny-new --pipeline-class ... --budget 0.2`, run
    with a pseudo-terminal as its stderr."""
    warehouse = copy_warehouse(small_demo[0], tmp_path_factory.mktemp("evaluate"))
    args = ["evaluate", MODEL, "--pipeline-class", "StableDiffusionPipeline"]
    args += ["--weights", str(tiny_sd), "--budget", "0.2", *SMALL]
    env = {"QCT2I_TINY_MODELS": str(tiny_models), "QCT2I_ML_PROFILE": "cpu"}
    done = run_cli_on_a_terminal(args, warehouse, **env)
    assert done.returncode == 0, done.stderr[-3000:]
    return warehouse, args, done.stdout, done.stderr


def _plan(warehouse: Path) -> tuple[int, int, int]:
    """(prompts, questions, prompts with a text target) of the evaluation's plan."""
    folder = warehouse.parent / "evaluations" / MODEL
    prompts = (folder / "prompts.jsonl").read_text().splitlines()
    questions = [json.loads(line) for line in (folder / "questions.jsonl").read_text().splitlines()]
    with_text = {q["prompt_id"] for q in questions if q.get("text_target")}
    return len(prompts), len(questions), len(with_text)


def test_the_new_generator_reaches_the_subset_estimates_and_the_leaderboard(evaluated):
    warehouse, _, stdout, _ = evaluated
    estimates = query(
        warehouse,
        "select language_scope, hcq_total, ci_lo, ci_hi, rank, rank_lo, rank_hi "
        f"from marts.fct_subset_estimates where model_id = '{MODEL}' order by 1",
    )
    assert [scope for scope, *_ in estimates] == ["bilingual", "en", "zh"]
    board = query(
        warehouse,
        f"select distinct evaluation from marts.fct_hcq_leaderboard where model_id = '{MODEL}'",
    )
    assert board == [("subset",)]
    (gpu_s,) = query(
        warehouse, f"select sum(latency_s * gpus) from raw.images where model_id = '{MODEL}'"
    )[0]
    lines = stdout.splitlines()
    assert f"{MODEL} on a irt plan: {gpu_s:,.1f} GPU-s for its images" in lines
    for scope, total, lo, hi, rank, rank_lo, rank_hi in estimates:  # the printed rows
        printed = f"{scope:<10} {total:7.2f}  {f'[{lo:.2f}, {hi:.2f}]':<15} {rank:>5}  "
        assert printed + f"[{rank_lo}, {rank_hi}]" in lines
    assert lines[-1] == f"report: {warehouse.parent / 'report.html'}"


def test_every_planned_prompt_was_drawn_judged_and_read(evaluated):
    warehouse, _, _, _ = evaluated
    folder = warehouse.parent / "evaluations" / MODEL
    planned = len((folder / "prompts.jsonl").read_text().splitlines())
    (images,) = query(warehouse, f"select count(*) from raw.images where model_id = '{MODEL}'")[0]
    assert images == planned > 0
    (judged, expected) = query(
        warehouse,
        f"select (select count(*) from raw.judgments where model_id = '{MODEL}'), "
        "(select count(*) from raw.questions q join raw.images i using (prompt_id) "
        f"where i.model_id = '{MODEL}')",
    )[0]
    assert judged == expected  # every question of every image, once
    (read, with_text) = query(
        warehouse,
        f"select (select count(*) from raw.transcriptions where model_id = '{MODEL}'), "
        "(select count(distinct i.prompt_id) from raw.images i join raw.questions q "
        f"using (prompt_id) where i.model_id = '{MODEL}' and q.text_target is not null)",
    )[0]
    assert read == with_text


def test_a_terminal_shows_each_steps_progress_and_stdout_reads_as_the_steps(evaluated):
    warehouse, _, stdout, terminal = evaluated
    planned, questions, with_text = _plan(warehouse)
    for bar in (
        f"{MODEL} images drawn: {planned}/{planned} |",
        f"{MODEL} images judged: {planned}/{planned} |",
        f"{MODEL} images read: {with_text}/{with_text} |",
    ):
        assert bar in terminal, terminal[-3000:]
    assert f"{questions} questions judged]" in terminal  # beside the images judged
    assert "dbt build ... (its log is shown if it fails)" in terminal
    folder = warehouse.parent / "evaluations" / MODEL
    lines = stdout.splitlines()
    assert lines[:7] == [  # started, each step with its counts
        f"started {folder}",
        f"gpu/generated_images [{MODEL}|0] ...",
        f"  planned={planned}, drawn={planned}, skipped=0",
        f"gpu/judged_images [{MODEL}] ...",
        f"  skipped=0, images_judged={planned}, questions={questions}",
        f"gpu/transcribed_images [{MODEL}] ...",
        f"  planned={with_text}, skipped=0, transcribed={with_text}",
    ]
    assert lines[7].startswith("appended ") and lines[8].startswith("into the working copy ")
    assert lines[9].startswith("dbt build: PASS=") and " ERROR=0 " in lines[9]  # not dbt's log
    assert lines[10].startswith(f"published {warehouse} (build ")
    assert lines[11].startswith(f"{MODEL} on a irt plan: ")  # then its rows and the report
    assert "\r" not in stdout and "dagster" not in stdout
    assert not [unit for unit in UNITS if unit in stdout]


def test_a_rerun_of_a_finished_evaluation_changes_nothing_and_says_so(evaluated, tiny_models):
    """... and, piped, its progress is plain lines on stderr: no bar frames, none on stdout."""
    warehouse, args, _, _ = evaluated
    before = query(warehouse, "select build_id from main.build_id")
    again = run_cli(args, warehouse, QCT2I_TINY_MODELS=str(tiny_models), QCT2I_ML_PROFILE="cpu")
    assert again.returncode == 0, again.stderr[-3000:]
    folder = warehouse.parent / "evaluations" / MODEL
    assert f"resuming {folder}" in again.stdout
    assert f"nothing new: the published warehouse holds every row of {folder}" in again.stdout
    assert query(warehouse, "select build_id from main.build_id") == before  # no build ran
    planned, _, with_text = _plan(warehouse)
    ours = [line for line in again.stderr.splitlines() if line.startswith(f"{MODEL}: ")]
    progress = [line.split(" (")[0] for line in ours]
    assert progress == [  # each step's one line: everything was already done
        f"{MODEL}: {planned} of {planned} images drawn",
        f"{MODEL}: {planned} of {planned} images judged, 0 questions judged",
        f"{MODEL}: {with_text} of {with_text} images read",
    ]
    assert "\r" not in again.stderr  # no redrawn frames, the model libraries' bars off too
    assert not [unit for unit in UNITS if unit in again.stdout]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--pipeline-class", "StableDiffusionPipeline", "--weights", "w", "--budget", "1.5"],
            "--budget must be a fraction in (0, 1], not 1.5",
        ),
        (
            ["--pipeline-class", "NoSuchPipeline", "--weights", "w"],
            "--pipeline-class 'NoSuchPipeline': not a diffusers pipeline class (diffusers ",
        ),
        (
            ["--pipeline-class", "StableDiffusionPipeline"],
            "--pipeline-class needs --weights PATH_OR_HUB_ID",
        ),
    ],
)
def test_a_request_that_cannot_run_is_refused_before_anything(extra, message, tmp_path):
    warehouse = tmp_path / "w.duckdb"
    warehouse.write_bytes(b"")  # exists: the refusals come before it is read
    refused = run_main(["evaluate", MODEL, *extra], warehouse)
    assert refused.returncode == 2
    assert refused.stderr.startswith(message), refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.duckdb"]


def test_a_registry_id_is_refused_for_a_new_pipeline(tmp_path):
    warehouse = tmp_path / "w.duckdb"
    warehouse.write_bytes(b"")
    args = ["evaluate", "lens", "--pipeline-class", "StableDiffusionPipeline", "--weights", "w"]
    refused = run_main(args, warehouse)
    assert refused.returncode == 2
    assert refused.stderr == (
        "'lens' is a row of seeds/generators.csv: evaluate it with --registry, or give your "
        "generator an id of its own\n"
    )


def test_the_evaluations_build_prints_dbts_summary_and_its_log_only_when_it_fails(
    tmp_path, monkeypatch
):
    """`qct2i evaluate` builds with `dbt_log=False`: dbt's output captured, its last line printed,
    its tail (in `DbtFailed`, as `run_dbt` captures it) shown when it fails. dbt is a fake here."""
    warehouse = tmp_path / "w.duckdb"
    duckdb.connect(str(warehouse)).close()
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(warehouse))
    dbt_log = (
        "\x1b[0m12:00:01  1 of 2 PASS not_null_x\n"
        "\x1b[0m12:00:02  Done. PASS=2 WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL=2\n"
    )
    echoed = []

    def passing(command, working, *, extra=(), echo=True):
        echoed.append(echo)
        return subprocess.CompletedProcess([], 0, dbt_log, "")

    def failing(command, working, *, extra=(), echo=True):
        raise dbt_runner.DbtFailed("dbt build failed ():\n12:00:01  Failure in test not_null_x")

    def build() -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cmd_build(argparse.Namespace(official_judge=None, wait=0, dbt_log=False))
        return code, out.getvalue(), err.getvalue()

    monkeypatch.setattr(dbt_runner, "run_dbt", passing)
    code, stdout, stderr = build()
    assert (code, stderr, echoed) == (0, "", [False])
    summary, published = stdout.splitlines()
    assert summary == "dbt build: PASS=2 WARN=0 ERROR=0 SKIP=0 NO-OP=0 TOTAL=2"
    assert published.startswith(f"published {warehouse} (build ")

    monkeypatch.setattr(dbt_runner, "run_dbt", failing)
    code, stdout, stderr = build()
    assert (code, stdout) == (1, "")
    assert stderr.startswith("dbt build failed ():\n12:00:01  Failure in test not_null_x\n")
    assert f"Not published: {warehouse} is unchanged" in stderr
