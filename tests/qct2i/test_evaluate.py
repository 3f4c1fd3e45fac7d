"""`qct2i evaluate` (issue 25): a new generator from a checkpoint folder to its leaderboard rows in
one command, on a demo warehouse, through the console script; a rerun that changes nothing and
says so; and the refusals, each with its exact message (in-process: no model is loaded).

The first run has a pseudo-terminal as its stderr, as a person's would be: each step's progress
bar shows there, and stdout holds the steps with their counts, the import's and the build's lines
(not dbt's log, nor Dagster's event lines) and the rows; the rerun's output is piped, so its
progress is plain lines.

The generator is the tiny Stable Diffusion built in code (random weights, saved, loaded by the
real `StableDiffusionPipeline`); the judge and the OCR reader are the cpu profile's tiny
Qwen3-VL, judging "yes" and with its OCR answer forced so a reading ends at once
(`tiny_models`, conftest.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.helpers import copy_warehouse, query, run_cli, run_cli_on_a_terminal, run_main

MODEL = "tiny-new"
SMALL = ["--steps", "2", "--width", "32", "--height", "32"]
UNITS = ("images drawn", "images judged", "images read")  # what the progress counts


@pytest.fixture(scope="module")
def yes_models(tiny_models) -> Path:
    """QCT2I_TINY_MODELS whose tiny Qwen3-VL judges every question "yes" and reads OCR_ANSWER
    (the console tests' models, tests/qct2i/conftest.py)."""
    return tiny_models


@pytest.fixture(scope="module")
def evaluated(small_demo, tiny_sd, tiny_models, tmp_path_factory):
    """(warehouse, args, stdout, what its terminal showed): a copy of the small demo warehouse
    (tests/conftest.py) after `qct2i evaluate tiny-new --pipeline-class ... --budget 0.2`, run
    with a pseudo-terminal as its stderr."""
    warehouse = copy_warehouse(small_demo[0], tmp_path_factory.mktemp("evaluate"))
    args = ["evaluate", MODEL, "--pipeline-class", "StableDiffusionPipeline"]
    args += ["--weights", str(tiny_sd), "--budget", "0.2", *SMALL]
    env = {"QCT2I_TINY_MODELS": str(tiny_models), "QCT2I_ML_PROFILE": "cpu"}
    # dbt as a user runs it (not quiet): the command prints dbt's summary line
    done = run_cli_on_a_terminal(args, warehouse, **env, DBT_QUIET="False")
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
    assert lines[9].startswith(("full build (", "incremental build ("))  # what it rebuilds
    assert lines[10].startswith("dbt build: PASS=") and " ERROR=0 " in lines[10]  # not dbt's log
    assert lines[11].startswith(f"published {warehouse} (build ")
    assert lines[12].startswith(f"{MODEL} on a irt plan: ")  # then its rows and the report
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


# -- --images: images drawn by the user's own code ----------------------------------------------


def _prompt_ids(warehouse: Path) -> list[str]:
    return [p for (p,) in query(warehouse, "select prompt_id from raw.prompts order by 1")]


def _write_images(folder: Path, prompt_ids: list[str]) -> Path:
    """A PNG per prompt (32 x 32) and meta.jsonl with latency 0.5 s on 1 GPU and a seed each."""
    from PIL import Image

    folder.mkdir()
    meta = []
    for i, prompt_id in enumerate(prompt_ids):
        Image.new("RGB", (32, 32), (5 * i % 256, 40, 90)).save(folder / f"{prompt_id}.png")
        meta.append(json.dumps({"prompt_id": prompt_id, "latency_s": 0.5, "gpus": 1, "seed": i}))
    (folder / "meta.jsonl").write_text("\n".join(meta) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def no_diffusers(tmp_path_factory) -> Path:
    """A PYTHONPATH entry whose `diffusers` refuses to import: a run that never builds a
    diffusers pipeline is untouched by it."""
    root = tmp_path_factory.mktemp("no-diffusers")
    (root / "diffusers").mkdir()
    (root / "diffusers" / "__init__.py").write_text(
        "raise ImportError('diffusers was imported: a pipeline was about to be built')\n"
    )
    return root


@pytest.fixture(scope="module")
def drawn_elsewhere(small_demo, tmp_path_factory) -> Path:
    """A folder of images for every prompt of the small demo world, as a user's code writes it."""
    return _write_images(tmp_path_factory.mktemp("drawn") / "drawn", _prompt_ids(small_demo[0]))


@pytest.fixture(scope="module")
def drawn_untimed(drawn_elsewhere, tmp_path_factory) -> Path:
    """The same images without meta.jsonl: drawn elsewhere, with no latency, GPU count or seed
    (issue 32)."""
    folder = tmp_path_factory.mktemp("untimed") / "drawn"
    folder.mkdir()
    for image in drawn_elsewhere.glob("*.png"):
        (folder / image.name).write_bytes(image.read_bytes())
    return folder


@pytest.fixture(scope="module")
def evaluated_images(small_demo, yes_models, no_diffusers, drawn_untimed, tmp_path_factory):
    """(warehouse, stdout): a copy of the small demo after `qct2i evaluate mine --images DIR`
    on a folder without meta.jsonl, run where `diffusers` refuses to import."""
    warehouse = copy_warehouse(small_demo[0], tmp_path_factory.mktemp("images"))
    env = {"QCT2I_TINY_MODELS": str(yes_models), "QCT2I_ML_PROFILE": "cpu"}
    env["PYTHONPATH"] = os.pathsep.join([str(no_diffusers), *sys.path])
    done = run_cli(["evaluate", "mine", "--images", str(drawn_untimed)], warehouse, **env)
    assert done.returncode == 0, done.stderr[-3000:]
    return warehouse, done.stdout


def test_images_drawn_elsewhere_are_evaluated_on_every_prompt(evaluated_images, drawn_untimed):
    """Guards against a folder without meta.jsonl being refused, or its generator losing
    quality rows for want of timings."""
    warehouse, stdout = evaluated_images
    n_prompts = len(_prompt_ids(warehouse))
    assert "gpu/generated_images" not in stdout  # nothing drawn
    assert f"images: {n_prompts} added from {drawn_untimed} (0 already there)" in stdout
    rows = query(
        warehouse,
        "select language_scope, evaluation, prompt_coverage_frac from marts.fct_hcq_leaderboard "
        "where model_id = 'mine' order by 1",
    )
    assert rows == [(s, "full", 1.0) for s in ("bilingual", "en", "pooled", "zh")]
    # the judge said yes to every question: every non-text capability scores 100
    scores = query(
        warehouse,
        "select distinct score from marts.fct_capability_scores where model_id = 'mine' "
        "and score_source = 'judgment' and score is not null",
    )
    assert scores == [(100.0,)]


UNTIMED_REASON = (
    "cost unknown: {n} of {n} images came without latency_s and gpus (drawn elsewhere, no "
    "timings), and no calibration, bundle or registry figure gives a cost"
)


def test_images_without_timings_have_an_unknown_cost_and_no_routing_rows_and_say_why(
    evaluated_images,
):
    """Guards against an unknown cost stored or printed as 0 (a free generator every router
    would pick), and against the generator vanishing from routing without a word: stdout, the
    exclusions mart and the report's routing section give the reason."""
    warehouse, stdout = evaluated_images
    n_prompts = len(_prompt_ids(warehouse))
    timings = query(
        warehouse,
        "select count(*), count(latency_s), count(gpus) from raw.images where model_id = 'mine'",
    )
    assert timings == [(n_prompts, 0, 0)]
    reason = UNTIMED_REASON.format(n=n_prompts)
    lines = stdout.splitlines()
    assert "mine on every prompt: unknown GPU-s for its images" in lines
    assert f"no routing rows: {reason}" in lines
    excluded = query(warehouse, "select * from marts.fct_router_excluded_generators")
    assert excluded == [("mine", "mine", "unknown", n_prompts, n_prompts, reason)]
    routed = query(
        warehouse,
        "select (select count(*) from marts.fct_router_profiles where model_id = 'mine'), "
        "(select count(*) from marts.agg_router_summary where router = 'fixed:mine'), "
        "(select count(*) from marts.fct_router_decisions where model_id = 'mine'), "
        "(select count(*) from marts.agg_router_frontier where model_id = 'mine'), "
        "(select count(*) from marts.agg_router_summary where router like 'fixed:%'), "
        "(select count(distinct model_id) from raw.judgments where model_id <> 'mine')",
    )
    *of_mine, n_fixed, n_others = routed[0]
    assert of_mine == [0, 0, 0, 0]
    assert n_fixed == n_others > 0  # every other generator is still routed
    report = (warehouse.parent / "report.html").read_text(encoding="utf-8")
    assert f"Left out of routing: mine ({reason})." in report


MARTS_OF_THE_NEW_GENERATOR = (
    "fct_hcq_leaderboard",
    "fct_capability_scores",
    "fct_rank_reliability",
    "fct_question_records",
)


def _rows_of(warehouse: Path, model_id: str) -> dict[str, list[tuple]]:
    return {
        mart: query(
            warehouse, f"select * from marts.{mart} where model_id = '{model_id}' order by all"
        )
        for mart in MARTS_OF_THE_NEW_GENERATOR
    }


def test_the_dagster_job_with_timings_gives_the_commands_quality_rows_and_routes_it(
    evaluated_images, small_demo, yes_models, drawn_elsewhere, tmp_path, monkeypatch
):
    """`evaluate_generator` on another copy of the same world, on the same images with their
    meta.jsonl, the command's flags as its run config: the same quality rows of the new
    generator as the command's run without timings (no quality mart depends on them; guards
    against the two front ends, or a missing meta.jsonl, changing a score), and here, with a
    cost, routing rows the untimed run has none of."""
    from dagster_defs.definitions import defs

    warehouse = copy_warehouse(small_demo[0], tmp_path / "job", name="qct2i.duckdb")
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("QCT2I_TINY_MODELS", str(yes_models))
    monkeypatch.setenv("QCT2I_ML_PROFILE", "cpu")
    config = {"model_id": "mine", "images": str(drawn_elsewhere)}
    job = defs().resolve_job_def("evaluate_generator")
    result = job.execute_in_process(
        run_config={"ops": {"evaluate_generator_op": {"config": config}}}
    )
    assert result.success
    by_command, _ = evaluated_images
    assert _rows_of(warehouse, "mine") == _rows_of(by_command, "mine")
    assert _rows_of(warehouse, "mine")["fct_hcq_leaderboard"]  # not two empty sets
    routed = query(
        warehouse,
        "select (select count(*) from marts.agg_router_summary where router = 'fixed:mine'), "
        "(select count(*) from marts.fct_router_excluded_generators), "
        "(select distinct cost_source from marts.fct_router_profiles where model_id = 'mine')",
    )
    assert routed == [(1, 0, "measured")]


def test_a_folder_with_problems_is_refused_before_anything_is_judged(small_demo, tmp_path):
    warehouse = copy_warehouse(small_demo[0], tmp_path / "w")
    prompt_ids = _prompt_ids(warehouse)
    images = _write_images(tmp_path / "drawn", prompt_ids)
    (images / f"{prompt_ids[0]}.png").unlink()  # a missing image
    (images / "stranger.png").write_bytes((images / f"{prompt_ids[1]}.png").read_bytes())
    refused = run_main(["evaluate", "mine", "--images", str(images)], warehouse)
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"images folder {images} refused (2 problems):",
        f"{prompt_ids[0]}.*: no image for prompt {prompt_ids[0]}",
        "stranger.png: no prompt stranger in this evaluation",
    ]
    folder = warehouse.parent / "evaluations" / "mine"
    assert not (folder / "judgments.jsonl").exists() and not (folder / "images.jsonl").exists()


def test_another_request_under_an_evaluated_id_is_refused_naming_what_differs(small_demo, tmp_path):
    warehouse = copy_warehouse(small_demo[0], tmp_path / "w")
    folder = warehouse.parent / "evaluations" / "mine"
    folder.mkdir(parents=True)
    earlier = {"model_id": "mine", "source": "images", "images": "/elsewhere", "budget": None}
    (folder / "evaluation.json").write_text(json.dumps(earlier), encoding="utf-8")
    images = _write_images(tmp_path / "drawn", _prompt_ids(warehouse)[:1])
    refused = run_main(["evaluate", "mine", "--images", str(images), "--budget", "0.5"], warehouse)
    assert refused.returncode == 2
    assert refused.stderr == (
        f"{folder / 'evaluation.json'}: mine was evaluated with other settings (budget: None "
        f"then, 0.5 now, images: '/elsewhere' then, {str(images)!r} now, pipeline_class: "
        "missing then, None now, seed: missing then, 0 now, settings: missing then, None now, "
        "strategy: missing then, 'irt' now, weights: missing then, None now); rerun it as it "
        "was, or pass --replace to start over (its stored evidence is then replaced)\n"
    )


def test_an_id_whose_evidence_came_from_elsewhere_is_refused(hand_published, tmp_path):
    warehouse = copy_warehouse(hand_published, tmp_path / "w")  # holds m1's judgments
    images = _write_images(tmp_path / "drawn", _prompt_ids(warehouse))
    refused = run_main(["evaluate", "m1", "--images", str(images)], warehouse)
    assert refused.returncode == 2
    assert refused.stderr == (
        f"{warehouse}: the warehouse already holds evidence of 'm1' that no evaluation of this "
        "command recorded (other images or settings); pass --replace to replace it, or give "
        "this generator an id of its own\n"
    )
    assert not (warehouse.parent / "evaluations").exists()
