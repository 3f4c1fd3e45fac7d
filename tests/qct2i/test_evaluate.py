"""`qct2i evaluate` (issue 25): a new generator from a checkpoint folder to its leaderboard rows in
one command, on a demo warehouse, through the console script; a rerun that changes nothing and
says so; and the refusals, each with its exact message (in-process: no model is loaded).

The generator is the tiny Stable Diffusion built in code (random weights, saved, loaded by the
real `StableDiffusionPipeline`); the judge and the OCR reader are the cpu profile's tiny
Qwen3-VL, whose OCR answer is forced so a reading ends at once (`tiny_models`, conftest.py)."""

from __future__ import annotations

import pytest

from tests.helpers import copy_warehouse, query, run_cli, run_main

MODEL = "tiny-new"
SMALL = ["--steps", "2", "--width", "32", "--height", "32"]


@pytest.fixture(scope="module")
def evaluated(small_demo, tiny_sd, tiny_models, tmp_path_factory):
    """A copy of the small demo warehouse (tests/conftest.py) after `qct2i evaluate tiny-new
    --pipeline-class ... --budget 0.2`."""
    warehouse = copy_warehouse(small_demo[0], tmp_path_factory.mktemp("evaluate"))
    args = ["evaluate", MODEL, "--pipeline-class", "StableDiffusionPipeline"]
    args += ["--weights", str(tiny_sd), "--budget", "0.2", *SMALL]
    done = run_cli(args, warehouse, QCT2I_TINY_MODELS=str(tiny_models), QCT2I_ML_PROFILE="cpu")
    assert done.returncode == 0, done.stderr[-3000:]
    return warehouse, args, done.stdout


def test_the_new_generator_reaches_the_subset_estimates_and_the_leaderboard(evaluated):
    warehouse, _, stdout = evaluated
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
    warehouse, _, _ = evaluated
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


def test_a_rerun_of_a_finished_evaluation_changes_nothing_and_says_so(evaluated, tiny_models):
    warehouse, args, _ = evaluated
    before = query(warehouse, "select build_id from main.build_id")
    again = run_cli(args, warehouse, QCT2I_TINY_MODELS=str(tiny_models), QCT2I_ML_PROFILE="cpu")
    assert again.returncode == 0, again.stderr[-3000:]
    folder = warehouse.parent / "evaluations" / MODEL
    assert f"resuming {folder}" in again.stdout
    assert f"nothing new: the published warehouse holds every row of {folder}" in again.stdout
    assert query(warehouse, "select build_id from main.build_id") == before  # no build ran


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
