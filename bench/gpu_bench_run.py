"""The architecture bench's timed run (issue 23): `python -m bench.gpu_bench --out DIR`.

Every registry row with an architecture config is timed in a child process of its own
(bench/gpu_bench_child.py), cheapest first by parameter count and FLUX.2-dev last, then the judge
(`bench/gpu_judge.py`'s `judge_figures`, when that module exists). Children come from a
multiprocessing forkserver that has imported torch, transformers, diffusers and the pipeline
classes once, so each starts in a fraction of a second; this process imports only the standard
library (and the bench's own modules) and never touches CUDA. A child that outlives its cap is
killed; a cap is the job's estimate or its share of the time left, whichever is larger, and
never more than the time left (`cap_share`), so the run ends within the budget (8 minutes by
default) whatever each job takes. `DIR/gpu_bench.json` is rewritten after every job,
so a run cut short keeps what it measured.

The first run on a lent device has to return something, so the JSON is written before anything
can fail (with the library versions, also printed first), and every failure before the first row
goes into its `failures` with a traceback: the forkserver dying at its imports (`process.start()`
raises), the plan child failing (a missing import), children that see no GPU that the parent's
nvidia-smi sees. The last two of these with forkserver children switch to spawn by themselves
(`start_children`); a missing import fails every start method alike and stops the run.

Per row: `gpu_s_per_image` is the row's own step count extrapolated from calls of `k_short` and
`k_long` steps (`extrapolate`): every flow-matching step has the same shapes, so a call takes a
fixed time (text encoding, decode, set-up) plus its steps. The two cheapest rows are also drawn at
their full step count, which checks the extrapolation (`full_run`). The pair of calls is timed
twice, and once more when the k_long call is not slower than the k_short one by more than the
calls' spread (`consistency`); a row is "ok" only when its figures are positive, finite and
consistent (`row_problems`), otherwise "failed: <why>" with its figures kept.

Test hook: `QCT2I_GPU_BENCH_FAULT` (comma-separated `FAULTS`) forces the early failures through
the real code path in a dry run (tests/bench/test_gpu_bench_dry_run.py); never set it on a device.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import itertools
import json
import math
import multiprocessing
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bench import gpu_bench

DEFAULT_BUDGET_S = 480.0
WARMUP_STEPS = 1
FULL_STEP_ROWS = 2  # the cheapest rows drawn at their full step count too
LAST_ROW = "flux2-dev"  # the largest (113 GB of weights): whatever time is left goes to it
# A job's cap is its share of the time left in proportion to its estimated seconds on the GPU
# machine, calibrated on the H200 run of 2026-12-04 (bench/RESULTS.md): a child's start (a spawned
# child's imports and CUDA context, 12-15 s) and its building (3-5 s whatever its size); each
# denoising step per billion parameters (0.0095-0.036 s measured at 1 MP, the CFG rows the
# dearest); GLM-Image's 1,281 autoregressive tokens at 1024^2 (eager `generate`: 102.4 s in its
# warm-up call, the third H200 run); the judge's figures (35.5 s of a 480 s budget)
ROW_START_S = 18.0
STEP_S_PER_B = 0.02
AUTOREGRESSIVE_S = 105.0
AUTOREGRESSIVE = {"GlmImagePipeline"}
# GLM-Image's prior is drawn for at most PRIOR_SHARE of its row's cap and PRIOR_MAX_S: the first
# run drew for 118 s without finishing and the row kept no figure. Tokens past the limit
# are extrapolated from the decoding steps timed (`prior_estimate`); the DiT gets random codebook
# ids in their place (its cost does not depend on their values)
PRIOR_MAX_S = 150.0
PRIOR_SHARE = 0.55
PRIOR_STEPS_SHOWN = 16  # decoding steps in the medians reported for the first and the last
SLOPE_SIGMAS = 3.0  # a step time's growth with the token index is taken beyond this many errors
JUDGE_SHARE = 0.1  # of the budget, planned for the judge
PLAN_CAP_S = 120.0
EXIT_GRACE_S = 30.0  # for a child that has sent its figures to release the device and exit
CHILD = "bench.gpu_bench_child"
JUDGE = "judge"
END = "__end__"  # marks a child's last message
OUT_NAME = "gpu_bench.json"
FORBIDDEN_MODULES = ("dagster", "pydantic", "duckdb", "dbt", "vllm")
# what the device run depends on, printed first and written into the JSON (read from package
# metadata: nothing is imported); peft because diffusers imports it whenever it is installed,
# torchvision because transformers then picks another image processor, triton for torch's kernels
LIBRARIES = (
    "torch",
    "transformers",
    "diffusers",
    "peft",
    "torchvision",
    "triton",
    "accelerate",
    "tokenizers",
    "safetensors",
)
TIMED_PAIRS = 2  # the (k_short, k_long) pair is timed twice: its spread is measured
FALLBACK_METHOD = "spawn"
FAULT_ENV = "QCT2I_GPU_BENCH_FAULT"
# import-error: the child module's import fails in every process, as a missing library would;
# forkserver-crash: it fails with another error in the forkserver only, which kills the server;
# child-no-cuda: forkserver children find no CUDA device while the parent is taken to see one GPU
# (spawned children see it); crash-before-first-row: the parent fails after the plan
FAULTS = ("import-error", "forkserver-crash", "child-no-cuda", "crash-before-first-row")


# ------------------------------------------------------------------------------ arithmetic


def step_counts(dry_run: bool) -> tuple[int, int]:
    """(k_short, k_long): the two timed calls' step counts."""
    return (1, 2) if dry_run else (2, 8)


def extrapolate(
    short_s: float, long_s: float, k_short: int, k_long: int, steps: int
) -> tuple[float, float]:
    """(seconds a step, seconds an image at `steps`), from calls of `k_short` and `k_long` steps
    that took `short_s` and `long_s`: a call is a fixed part plus k steps."""
    per_step = (long_s - short_s) / (k_long - k_short)
    return per_step, short_s + (steps - k_short) * per_step


def consistency(shorts: list[float], longs: list[float]) -> dict:
    """Whether the k_long calls took longer than the k_short calls by more than their measured
    spread (the two calls' ranges added): a step's time is their difference, so a difference
    within the noise makes a step of any size, or a negative one. The figures come from the
    fastest call of each (the least disturbed)."""
    spread = (max(shorts) - min(shorts)) + (max(longs) - min(longs))
    margin = min(longs) - min(shorts)
    return {
        "short_s": [round(s, 4) for s in shorts],
        "long_s": [round(s, 4) for s in longs],
        "margin_s": round(margin, 4),
        "spread_s": round(spread, 4),
        "consistent": margin > spread,
    }


def row_problems(record: dict) -> list[str]:
    """Why a row that ended "ok" cannot be a cost: a figure that is missing, not finite or not
    positive, or timed calls that are not consistent. None of them may reach `qct2i calibrate`."""
    parts = record.get("parts") or {}
    figures = {
        "t_short_s": record.get("t_short_s"),
        "t_long_s": record.get("t_long_s"),
        "per_step_s": parts.get("per_step_s"),
        "gpu_s_per_image": record.get("gpu_s_per_image"),
        "gpu_s_per_mp": record.get("gpu_s_per_mp"),
    }
    problems = [
        f"{name} is {value!r}, not a positive finite number"
        for name, value in figures.items()
        if not is_positive_finite(value)
    ]
    timed = record.get("consistency")
    if timed is None:
        problems.append("no consistency check of its timed calls")
    elif not timed["consistent"]:
        problems.append(
            f"inconsistent: k_long {timed['long_s']} s against k_short {timed['short_s']} s, "
            f"{timed['margin_s']} s apart within their spread of {timed['spread_s']} s"
        )
    return problems


def is_positive_finite(value) -> bool:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return is_number and math.isfinite(value) and value > 0


def judge_row(record: dict) -> None:
    """A row that ended "ok" becomes "failed: <why>" when its figures cannot be a cost; its
    figures stay in the record for the reader."""
    if record.get("status") == "ok" and (problems := row_problems(record)):
        record["status"] = "failed: " + "; ".join(problems)


def prior_limit_s(cap_s: float | None) -> float:
    """Seconds GLM-Image's prior may be drawn for in a row capped at `cap_s`."""
    return PRIOR_MAX_S if cap_s is None else min(PRIOR_MAX_S, PRIOR_SHARE * cap_s)


def prior_estimate(began: float, marks: list[float], ended: float, wanted: int) -> dict:
    """The prior's figures from the clock times of one `generate`: it began at `began`, token i's
    logits were ready at `marks[i]`, it ended at `ended`, and `wanted` tokens were asked for.

    When fewer were drawn (the time limit), the rest are extrapolated from the later half of the
    steps timed (the first carry warm-up): at their mean time, or, when the steps grow with the
    context (a least-squares slope b over the token index more than SLOPE_SIGMAS standard errors
    above 0), at a + b * (token index) summed over the missing indices. A slope within the noise
    is not extrapolated: carried over several times the range it was fitted on, noise would
    swamp the figure. None when fewer than two tokens were drawn (no step to time)."""
    drawn = len(marks)
    steps = [after - before for before, after in itertools.pairwise(marks)]
    figures = {
        "tokens": wanted,
        "tokens_drawn": drawn,
        "complete": drawn >= wanted,
        "measured_s": ended - began,
        "prefill_s": marks[0] - began if marks else None,
        "step_ms_first": _median_ms(steps[:PRIOR_STEPS_SHOWN]),
        "step_ms_last": _median_ms(steps[-PRIOR_STEPS_SHOWN:]),
        "slope_ms_per_token": None,
    }
    if figures["complete"]:
        return figures | {"estimate_s": figures["measured_s"]}
    if not steps:
        return figures | {"estimate_s": None}
    later = range(len(steps) // 2, len(steps))
    indices, seconds = [j + 1 for j in later], [steps[j] for j in later]  # step j drew token j+1
    missing = wanted - drawn
    growth = _growth(indices, seconds)
    if growth is None:
        rest_s = missing * statistics.fmean(seconds)
    else:
        slope, intercept = growth
        index_sum = (drawn + wanted - 1) * missing / 2  # the missing tokens' indices added
        rest_s = missing * intercept + slope * index_sum
        figures["slope_ms_per_token"] = slope * 1000
    return figures | {"estimate_s": figures["measured_s"] + rest_s}


def _growth(indices: list[int], seconds: list[float]) -> tuple[float, float] | None:
    """(slope, intercept) of the steps' least-squares line when its slope is more than
    SLOPE_SIGMAS standard errors above 0; None otherwise (or with fewer than 3 steps)."""
    if len(indices) < 3:
        return None
    slope, intercept = statistics.linear_regression(indices, seconds)
    mean = statistics.fmean(indices)
    spread = sum((x - mean) ** 2 for x in indices)
    residual = sum((y - intercept - slope * x) ** 2 for x, y in zip(indices, seconds, strict=True))
    standard_error = math.sqrt(residual / (len(indices) - 2) / spread)
    return (slope, intercept) if slope > SLOPE_SIGMAS * standard_error else None


def _median_ms(seconds: list[float]) -> float | None:
    return statistics.median(seconds) * 1000 if seconds else None


def cap_share(left_s: float, estimates: list[float]) -> float:
    """The next job's cap: its estimate's share (`estimates[0]`) of the time left among the jobs
    still to run, or its estimate where that is more and the time left holds it; never more than
    the time left, so the run ends within its budget.

    With a budget that holds every estimate the share is the larger, and a job that ends early
    leaves its time to the later ones. With a short one (a rerun's `--budget-s`), shares would
    cut every job below what it needs, and none might finish: run 5 on the H200 gave three
    batch-4 rows 62 % of their estimates, and all three timed out. Instead the jobs, cheapest
    first, get their estimates while the time lasts, and the last ones what is left."""
    left = max(0.0, left_s)
    share = left * estimates[0] / sum(estimates)
    return max(share, min(estimates[0], left))


def row_estimate_s(plan: dict, params: int, k_steps: tuple[int, int]) -> float:
    """A row's estimated seconds on the GPU machine, its claim on the budget: its start and
    building, and the denoising steps it runs (warm-up, the timed calls, and the full draw for
    the cheapest rows) in proportion to its parameters."""
    timed = TIMED_PAIRS * sum(k_steps)
    steps_run = WARMUP_STEPS + timed + (plan["steps"] if plan["full_steps"] else 0)
    images = plan.get("batch", 1)
    estimate = ROW_START_S + params / 1e9 * steps_run * images * STEP_S_PER_B
    if plan["pipeline_class"] in AUTOREGRESSIVE:
        estimate += AUTOREGRESSIVE_S
    return estimate


def judge_estimate_s(row_estimates: list[float]) -> float:
    """The judge's claim: JUDGE_SHARE of the whole."""
    return sum(row_estimates) * JUDGE_SHARE / (1 - JUDGE_SHARE)


# ---------------------------------------------------------------------------------- rows


def row_plan(row: dict[str, str], arch_dir: Path, batch: int = 1) -> dict:
    """What a row's child needs from its registry row (seeds/generators.csv): `batch` images a
    call, or the row's `max_batch_size` when that is smaller (GLM-Image draws one a call), as
    the project's generator splits a batch (`diffusers_generator.drawn_batch`, which this
    process, importing only the standard library, cannot import)."""
    most = int(row.get("max_batch_size") or 0)
    return {
        "batch": min(batch, most) if most else batch,
        "model_id": row["model_id"],
        "pipeline_class": row["pipeline_class"],
        "steps": int(row["default_steps"]),
        "guidance": float(row["default_guidance"]),
        "guidance_arg": row["guidance_arg"],
        "call_kwargs": json.loads(row["call_kwargs"] or "{}"),
        "extra_components": json.loads(row["extra_components"] or "{}"),
        "width": int(row["width"]),
        "height": int(row["height"]),
        "arch_dir": str(arch_dir),
        "full_steps": False,
    }


def select_rows(
    rows: list[dict[str, str]], arch_dir: Path, only: list[str] | None, batch: int = 1
) -> tuple[list[dict], list[dict]]:
    """(plans of the rows with a config, records of the rows that cannot be built)."""
    plans, unbuilt = [], []
    for row in rows:
        if only and row["model_id"] not in only:
            continue
        if (arch_dir / f"{row['model_id']}.json").exists():
            plans.append(row_plan(row, arch_dir, batch))
            continue
        reason = gpu_bench.no_pipeline_reason(row) or "no config in bench/arch_configs"
        unbuilt.append(_row_record(row["model_id"], row["pipeline_class"], f"not built: {reason}"))
    return plans, unbuilt


def order_plans(plans: list[dict], counts: dict[str, int]) -> list[dict]:
    """Cheapest first by parameter count, FLUX.2-dev last; the first FULL_STEP_ROWS also drawn
    at their full step count."""
    ordered = sorted(
        plans,
        key=lambda p: (p["model_id"] == LAST_ROW, counts.get(p["model_id"], 0), p["model_id"]),
    )
    return [
        {**plan, "full_steps": i < FULL_STEP_ROWS and plan["model_id"] != LAST_ROW}
        for i, plan in enumerate(ordered)
    ]


def _row_record(model_id: str, pipeline_class: str, status: str | None = None) -> dict:
    record = {"model_id": model_id, "pipeline_class": pipeline_class}
    return record | ({"status": status} if status else {})


# -------------------------------------------------------------------------------- children


def child_context(start_method: str = "forkserver"):
    """Children forked from a server that has imported the child module (torch, transformers,
    diffusers, the pipeline classes): each starts without paying those imports again, and none
    inherits a CUDA context (the server never makes one; importing those libraries calls no CUDA
    function). "spawn" is the fallback should a driver refuse forked children: each child then
    imports everything itself (seconds a row), and `start_children` falls back to it by itself."""
    context = multiprocessing.get_context(start_method)
    if start_method == "forkserver":
        context.set_forkserver_preload([CHILD])
    return context


def injected_faults() -> set[str]:
    """The failures a test forces (`FAULT_ENV`, comma-separated `FAULTS`); none on a device."""
    named = {f.strip() for f in os.environ.get(FAULT_ENV, "").split(",") if f.strip()}
    if unknown := named - set(FAULTS):
        raise ValueError(f"{FAULT_ENV}: unknown {sorted(unknown)}; known: {FAULTS}")
    return named


def child_main(connection, entry: str, args: tuple) -> None:
    """A child's body: `entry` ("module:function") called with a send function and `args`; its
    last message says how it ended and which top-level modules it had loaded."""
    try:
        module, name = entry.split(":")
        getattr(importlib.import_module(module), name)(connection.send, *args)
        final = {"status": "ok"}
    except BaseException as error:  # a job's failure is its status, not the run's
        final = {
            "status": f"error: {type(error).__name__}: {error}"[:600],
            "traceback": traceback.format_exception(error)[-6:],
        }
    connection.send({**final, "modules": loaded_modules(), END: True})
    connection.close()


def loaded_modules() -> list[str]:
    return sorted({name.split(".")[0] for name in list(sys.modules)})


def supervise(
    context, entry: str, args: tuple, cap_s: float, *, own_group: bool = False
) -> tuple[dict, list[str]]:
    """(the job's record, the modules its child loaded): its messages merged as they come, until
    it ends, dies or reaches `cap_s` (then it is killed and its status is "timeout").

    `own_group`: the child leads a process group of its own and may start processes (vLLM's
    engine core, a Dagster run); the whole group is killed at the cap, and once the job has
    ended, so nothing it started holds the device for the next job."""
    receiver, sender = context.Pipe(duplex=False)
    target, daemon = (group_child_main, False) if own_group else (child_main, True)
    process = context.Process(target=target, args=(sender, entry, args), daemon=daemon)
    began = time.monotonic()
    process.start()
    sender.close()
    record, modules = {"cap_s": round(cap_s, 1)}, []
    while True:
        left = began + cap_s - time.monotonic()
        if left <= 0 or not receiver.poll(left):
            record["status"] = "timeout"
            kill(process, own_group)
            break
        try:
            message = receiver.recv()
        except EOFError:  # the child died without a word (killed for memory, a crash in C)
            process.join(EXIT_GRACE_S)
            record["status"] = f"error: the child exited with code {process.exitcode}"
            break
        if message.pop(END, False):
            modules = message.pop("modules")
            _end(record, message)
            break
        record.update(message)
    process.join(EXIT_GRACE_S)
    if process.is_alive() or own_group:
        kill(process, own_group)
        process.join()
    record["wall_s"] = round(time.monotonic() - began, 2)
    return record, modules


def group_child_main(connection, entry: str, args: tuple) -> None:
    """`child_main` in a process group of its own (its pid is the group's id)."""
    os.setpgrp()
    child_main(connection, entry, args)


def kill(process, own_group: bool) -> None:
    """SIGKILL the child, or its whole group; a group not made yet (the child killed before its
    first line) or already gone leaves the child alone to kill."""
    if own_group:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    if process.is_alive():
        process.kill()


def _end(record: dict, final: dict) -> None:
    """The final message's status wins over one the job sent, except that an "ok" from the
    trampoline leaves the job's own status (the judge may send one)."""
    if final["status"] == "ok" and "status" in record:
        final = {k: v for k, v in final.items() if k != "status"}
    record.update(final)


def run_judge(send, device: str, dry_run: bool) -> None:
    from bench.gpu_judge import judge_figures

    send(judge_figures(device, dry_run))


# -------------------------------------------------------------------------------- document


def library_versions() -> dict[str, str | None]:
    """Installed versions, read from package metadata (nothing is imported here)."""
    versions = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def gpu_from_smi() -> list[dict] | None:
    """The GPUs nvidia-smi reports (model, driver, memory), or None without one."""
    query = "--query-gpu=name,driver_version,memory.total"
    try:
        done = subprocess.run(
            ["nvidia-smi", query, "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    keys = ("name", "driver", "memory")
    return [
        dict(zip(keys, (v.strip() for v in line.split(",")), strict=False))
        for line in done.stdout.splitlines()
    ]


def versions_line(versions: dict[str, str | None]) -> str:
    return "versions: " + ", ".join(f"{name} {v or 'absent'}" for name, v in versions.items())


def new_document(dry_run: bool, budget_s: float, start_method: str, batch: int = 1) -> dict:
    """The document before anything that can fail has run (nvidia-smi's failures are None)."""
    k_short, k_long = step_counts(dry_run)
    return {
        "mode": "dry-run" if dry_run else "gpu",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "budget_s": budget_s,
        "batch": batch,  # images a call (a row's own `batch` may be less: its max_batch_size)
        "gpu": None if dry_run else gpu_from_smi(),
        "versions": library_versions(),
        "steps": {
            "warmup": WARMUP_STEPS,
            "k_short": k_short,
            "k_long": k_long,
            "timed_pairs": TIMED_PAIRS,
        },
        "start_method": start_method,
        "failures": [],  # every failure before the first row, with its traceback
    }


def parent_gpu_count(document: dict, faults: set[str]) -> int:
    """The GPUs this process sees (nvidia-smi; it never touches CUDA itself); "child-no-cuda"
    has it see one in a dry run."""
    if "child-no-cuda" in faults:
        return 1
    return len(document["gpu"] or [])


def failure_entry(stage: str, start_method: str, error: str, trace: list[str], then: str) -> dict:
    return {
        "stage": stage,
        "start_method": start_method,
        "error": error[:600],
        "traceback": trace,
        "then": then,
    }


def exception_entry(stage: str, start_method: str, error: BaseException, then: str) -> dict:
    trace = traceback.format_exception(error)[-8:]
    return failure_entry(stage, start_method, f"{type(error).__name__}: {error}", trace, then)


def write_document(path: Path, document: dict) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(document, indent=2) + "\n")
    os.replace(partial, path)


# ------------------------------------------------------------------------------------ jobs


@dataclass
class Job:
    name: str
    entry: str  # "module:function" for child_main
    args: tuple
    estimate_s: float  # its claim on the budget (row_estimate_s)
    record: dict = field(default_factory=dict)  # the job's entry in the document


def plan_jobs(plans: list[dict], counts: dict[str, int], dry_run: bool, with_judge: bool):
    rows = order_plans(plans, counts)
    k_steps = step_counts(dry_run)
    jobs = [
        Job(
            plan["model_id"],
            f"{CHILD}:time_row",
            (plan, dry_run),
            row_estimate_s(plan, counts.get(plan["model_id"], 0), k_steps),
            {
                **_row_record(plan["model_id"], plan["pipeline_class"], "not run yet"),
                "params": counts.get(plan["model_id"]),
                "steps": plan["steps"],
                "guidance": {plan["guidance_arg"]: plan["guidance"]},
                "registry_resolution": f"{plan['width']}x{plan['height']}",
            },
        )
        for plan in rows
    ]
    if with_judge:
        weight = judge_estimate_s([job.estimate_s for job in jobs])
        device = "cpu" if dry_run else "cuda"
        jobs.append(Job(JUDGE, f"{__name__}:run_judge", (device, dry_run), weight))
    return jobs


def planned_caps(jobs: list[Job], left_s: float) -> list[dict]:
    """Each job's cap if every job before it used all of its own: the least it can get."""
    estimates = [job.estimate_s for job in jobs]
    planned = []
    for i, job in enumerate(jobs):
        cap = cap_share(left_s, estimates[i:])
        planned.append(
            {"job": job.name, "estimate_s": round(job.estimate_s, 1), "cap_s": round(cap, 1)}
        )
        left_s -= cap
    return planned


@dataclass
class Budget:
    """The run's seconds, counted from its start (the forkserver's and the plan's time too)."""

    total_s: float
    began: float = field(default_factory=time.monotonic)

    def elapsed(self) -> float:
        return time.monotonic() - self.began

    def left(self) -> float:
        return self.total_s - self.elapsed()


def run_bench(
    out_dir: Path,
    only: list[str] | None = None,
    budget_s: float = DEFAULT_BUDGET_S,
    dry_run: bool = False,
    arch_dir: Path = gpu_bench.ARCH_DIR,
    start_method: str = "forkserver",
    batch: int = 1,
) -> int:
    """Time every selected row and the judge, `batch` images a call; 0 when every built row and
    the judge ended ok. The JSON is written before anything can fail, and any failure of this
    process is written into it with its traceback."""
    budget = Budget(budget_s)
    faults = injected_faults()
    document = new_document(dry_run, budget_s, start_method, batch)
    print(versions_line(document["versions"]), flush=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / OUT_NAME
    write_document(path, document)
    stage = "before the first row"
    try:
        started = start_children(document, budget, only, dry_run, arch_dir, faults)
        write_document(path, document)
        if started is None:
            return 1
        context, jobs = started
        if "crash-before-first-row" in faults:
            raise RuntimeError(f"injected: crash-before-first-row ({FAULT_ENV})")
        for i, job in enumerate(jobs):
            stage = f"at job {job.name}"
            caps = [j.estimate_s for j in jobs[i:]]
            run_job(context, job, cap_share(budget.left(), caps), document)
            document["wall_s"] = round(budget.elapsed(), 1)
            write_document(path, document)
    except Exception as error:  # the run's own failure goes into the JSON, not only to stderr
        entry = exception_entry(stage, document["start_method"], error, "stopped")
        document["failures"].append(entry)
        write_document(path, document)
        print(f"failed {stage}: {entry['error']}", file=sys.stderr, flush=True)
        return 1
    return 0 if all_ok(document) else 1


def start_children(
    document: dict, budget: Budget, only, dry_run: bool, arch_dir: Path, faults: set[str]
):
    """(context, jobs in their order), or None when no start method gives working children.

    The plan's child counts every row's parameters (the order) and describes the device. With
    forkserver children it is also the check that children can start at all: the server dying at
    its imports (start() raises) or children without the GPU the parent sees switch to spawn; a
    failed plan (a missing import: every start method would fail alike) stops the run. Every
    failure is in the document's `failures` with its traceback."""
    plans, unbuilt = select_rows(gpu_bench.registry_rows(), arch_dir, only, document["batch"])
    ids = [plan["model_id"] for plan in plans]
    parent_gpus = parent_gpu_count(document, faults)
    methods = list(dict.fromkeys([document["start_method"], FALLBACK_METHOD]))
    for i, method in enumerate(methods):
        then = f"switched to {methods[i + 1]}" if i + 1 < len(methods) else "stopped"
        context = child_context(method)
        document["start_method"] = method
        plan_args = (ids, str(arch_dir), dry_run, method)
        cap = min(PLAN_CAP_S, budget.left())
        try:
            facts, modules = supervise(context, f"{CHILD}:plan_facts", plan_args, cap)
        except Exception as error:  # the server died before its first child
            entry = exception_entry(f"{method} start", method, error, then)
            entry["note"] = "the server's own traceback went to stderr (its imports)"
            document["failures"].append(entry)
            continue
        document["plan"] = {k: facts.get(k) for k in ("status", "wall_s", "count_errors")}
        if facts["status"] != "ok":
            trace = facts.get("traceback", [])
            entry = failure_entry("plan", method, facts["status"], trace, "stopped")
            document["failures"].append(entry)
            return None
        if no_gpu := children_without_gpu(parent_gpus, dry_run, facts["device"]):
            document["device"] = facts["device"]
            error, trace = cuda_error(facts["device"])
            entry = failure_entry("CUDA in children", method, f"{no_gpu}: {error}", trace, then)
            document["failures"].append(entry)
            continue
        return context, planned(document, budget, plans, unbuilt, facts, modules, only, dry_run)
    return None


def children_without_gpu(parent_gpus: int, dry_run: bool, device: dict) -> str | None:
    """Why the children cannot time on a GPU, or None: they see none of the GPUs the parent
    sees, or (a GPU run) none at all. A dry run's children are not asked unless the parent
    sees one."""
    seen = device.get("cuda_devices")
    if parent_gpus and not seen:
        return f"children see no GPU; the parent sees {parent_gpus}"
    if not dry_run and not seen:
        return "no GPU: neither the children nor nvidia-smi see one"
    return None


def cuda_error(device: dict) -> tuple[str, list[str]]:
    """(the children's CUDA error, its traceback), as the plan's child reported them."""
    error = device.get("cuda_error") or "torch.cuda.device_count() is 0"
    return error, device.get("cuda_traceback", [])


def planned(document, budget, plans, unbuilt, facts, modules, only, dry_run) -> list[Job]:
    """The jobs in their order, and the document's plan of them."""
    from bench.gpu_bench_tokens import BENCH_PROMPT

    not_judged = why_no_judge(only)
    jobs = plan_jobs(plans, facts.get("counts", {}), dry_run, with_judge=not_judged is None)
    document |= {
        "device": facts.get("device"),
        "cap_plan": planned_caps(jobs, budget.left()),
        "generators": [job.record for job in jobs if job.name != JUDGE] + unbuilt,
        "judge": {"status": not_judged or "not run yet"},
        "loaded_modules": module_lists(set(modules)),
        "prompt": BENCH_PROMPT,
    }
    return jobs


def why_no_judge(only: list[str] | None) -> str | None:
    if only and JUDGE not in only:
        return "not run: not among --only"
    if not (gpu_bench.BENCH_DIR / "gpu_judge.py").exists():
        return "not run: bench/gpu_judge.py missing"
    return None


def run_job(context, job: Job, cap_s: float, document: dict) -> None:
    """One job in its child; its record goes into the document."""
    record, modules = supervise(context, job.entry, job_arguments(job, cap_s), cap_s)
    if job.name == JUDGE:
        document["judge"] = record
    else:
        job.record.update(record)
        judge_row(job.record)
        record = job.record
    seen = set(document["loaded_modules"]["children"]) | set(modules)
    document["loaded_modules"] = module_lists(seen)
    print(progress_line(job.name, record), flush=True)


def job_arguments(job: Job, cap_s: float) -> tuple:
    """A row's child is told its cap (GLM-Image's prior is drawn for a share of it)."""
    if job.name == JUDGE:
        return job.args
    plan, *rest = job.args
    return ({**plan, "cap_s": cap_s}, *rest)


def module_lists(children: set[str]) -> dict:
    parent = set(loaded_modules())
    return {
        "parent": sorted(parent),
        "children": sorted(children),
        "forbidden": sorted((parent | children) & set(FORBIDDEN_MODULES)),
    }


def all_ok(document: dict) -> bool:
    built = [r for r in document["generators"] if not r["status"].startswith("not built")]
    judge = document["judge"]["status"]
    return all(r["status"] == "ok" for r in built) and (
        judge == "ok" or judge.startswith("not run")
    )


def progress_line(name: str, record: dict) -> str:
    figure = record.get("gpu_s_per_image")
    per_image = f"{figure:.3f} s an image" if figure is not None else "no figure"
    took = f"{record['wall_s']:.1f} s of its {record['cap_s']:.0f} s cap"
    return f"{name:15} {record.get('status')}: {per_image} ({took})"
