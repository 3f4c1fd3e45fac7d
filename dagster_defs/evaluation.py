"""Evaluating a new generator (issue 25): from its checkpoint, a registry row or a folder of its
images to its place on the leaderboard, in one step that runs what a user would otherwise run one
by one, through the same assets, import and build:

    plan (a budget's prompts, or every prompt) -> generate (`gpu/generated_images`; with
    --images the folder is checked and copied in instead) -> judge (`gpu/judged_images`) -> OCR
    (`gpu/transcribed_images`) -> append import -> build -> its rows.

Two front ends share it: `qct2i evaluate` (qct2i/evaluate_command.py: the import and build of
`qct2i import --append` and `qct2i build`) and the Dagster job `evaluate_generator` (below: the
import and build of the `import_and_build` job's assets). Both call `prepare_evaluation` for
everything before the import, and `result_lines` after the build.

Everything lands in the evaluation's folder beside the warehouse, `evaluations/<MODEL_ID>/`: a
GPU bundle holding `evaluation.json` (what was asked), the plan's prompts and questions, the
images, judgments, transcriptions and the generator's row. A rerun of the same command goes on
where it stopped: the plan is kept, the assets skip what is done (by key), the import adds only
new rows, and a finished evaluation says that it changed nothing. A user's generator is a row of
the warehouse's own registry (`ingestion.backends.api.generators`), so it is a partition of the
GPU assets like any other.
"""

import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field as PydanticField

from ingestion.backends.api.generators import (
    RegistryError,
    load_generator_specs,
    local_generators_path,
    register_local_generator,
)

EVALUATION_FILE = "evaluation.json"
IMAGES_BACKEND = "images"  # the registry backend of a generator whose images were drawn elsewhere


class EvaluationRefused(Exception):
    """An evaluation that cannot start or go on (a message for the user, no traceback)."""


@dataclass(frozen=True)
class Settings:
    """How the generator is called (the registry row's columns; None: the registry default)."""

    steps: int = 28
    guidance: float = 4.0
    guidance_arg: str = "guidance_scale"
    width: int = 1024
    height: int = 1024
    gpus: int = 1
    call_kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Request:
    """What `qct2i evaluate` was asked: recorded in evaluation.json, compared on a rerun."""

    model_id: str
    source: str  # "pipeline", "registry" or "images"
    pipeline_class: str | None = None
    weights: str | None = None
    images: str | None = None
    settings: Settings | None = None
    budget: float | None = None  # None: every prompt
    strategy: str = "irt"
    seed: int = 0

    def as_json(self) -> dict:
        return asdict(self)

    @classmethod
    def of(cls, flags: Mapping[str, Any]) -> "Request":
        """The request of `qct2i evaluate`'s flags or of the job's run config, which holds them
        by the same names (other keys are ignored). A local weights folder and an images folder
        are taken as absolute paths."""
        images, weights = flags["images"], flags["weights"]
        source = "images" if images else "registry" if flags["registry"] else "pipeline"
        if weights and Path(weights).is_dir():
            weights = str(Path(weights).resolve())
        settings = Settings(**{f.name: flags[f.name] for f in fields(Settings)})
        return cls(
            model_id=flags["model_id"],
            source=source,
            pipeline_class=flags["pipeline_class"],
            weights=weights,
            images=str(Path(images).resolve()) if images else None,
            settings=settings if source == "pipeline" else None,
            budget=flags["budget"],
            strategy=flags["strategy"],
            seed=flags["seed"],
        )


def evaluation_folder(warehouse: Path, model_id: str) -> Path:
    return Path(warehouse).parent / "evaluations" / model_id


def check_request(request: Request) -> None:
    """Refusals that need no warehouse: the budget, the id, the pipeline class."""
    from ingestion.bundle.format import SAFE_ID_RULE, is_safe_id

    if not is_safe_id(request.model_id):
        raise EvaluationRefused(f"model id {request.model_id!r} is not a safe id ({SAFE_ID_RULE})")
    if request.budget is not None and not 0.0 < request.budget <= 1.0:
        raise EvaluationRefused(f"--budget must be a fraction in (0, 1], not {request.budget}")
    if request.source == "pipeline" and not request.weights:
        raise EvaluationRefused("--pipeline-class needs --weights PATH_OR_HUB_ID")
    specs = load_generator_specs()
    known = specs.get(request.model_id)
    if request.source == "registry":
        if known is None:
            raise EvaluationRefused(
                f"--registry: no registry row {request.model_id!r} in seeds/generators.csv or "
                f"{local_generators_path()}"
            )
        return
    if known is not None and known.origin == "seed":
        raise EvaluationRefused(
            f"{request.model_id!r} is a row of seeds/generators.csv: evaluate it with "
            "--registry, or give your generator an id of its own"
        )
    if request.source == "pipeline":
        check_pipeline_class(request.pipeline_class or "")


def check_pipeline_class(name: str) -> None:
    """The class must be a diffusers pipeline (diffusers is imported here, not at start-up)."""
    import diffusers

    found = getattr(diffusers, name, None)
    if not (isinstance(found, type) and issubclass(found, diffusers.DiffusionPipeline)):
        raise EvaluationRefused(
            f"--pipeline-class {name!r}: not a diffusers pipeline class (diffusers "
            f"{diffusers.__version__}); e.g. StableDiffusionPipeline, FluxPipeline"
        )


def registry_row(request: Request) -> dict:
    """The warehouse-registry row of a user's generator (the seed's columns)."""
    settings = request.settings or Settings()
    images = request.source == "images"
    return {
        "model_id": request.model_id,
        "display_name": request.model_id,
        "hub_repo_id": (request.images if images else request.weights) or "",
        "pipeline_class": "" if images else request.pipeline_class or "",
        "default_steps": "0" if images else str(settings.steps),
        "default_guidance": "0" if images else str(settings.guidance),
        "width": str(settings.width),
        "height": str(settings.height),
        "gpus": str(settings.gpus),
        "backend": IMAGES_BACKEND if images else "diffusers",
        "guidance_arg": settings.guidance_arg,
        "call_kwargs": json.dumps(settings.call_kwargs) if settings.call_kwargs else "",
    }


def images_generator_row(request: Request) -> dict:
    """The bundle `generators` row of a generator whose images came from a folder: no hub id,
    no pipeline, no cost of its own (the marts measure one from the images' latency and GPUs;
    without them the cost is unknown and routing leaves the generator out, saying why)."""
    return {
        "model_id": request.model_id,
        "display_name": request.model_id,
        "cost_gpu_s_per_mp": None,
        "hub_id": None,
        "revision": None,
        "pipeline_class": None,
        "cost_source": None,
    }


def start_or_resume(request: Request, warehouse: Path, replace: bool) -> tuple[Path, bool]:
    """The evaluation folder with its plan, and whether it was started now. A folder of another
    request is refused unless `replace` (then it starts over)."""
    folder = evaluation_folder(warehouse, request.model_id)
    recorded = folder / EVALUATION_FILE
    if recorded.exists():
        earlier = json.loads(recorded.read_text(encoding="utf-8"))
        if earlier == request.as_json():
            return folder, False
        if not replace:
            raise EvaluationRefused(
                f"{recorded}: {request.model_id} was evaluated with other settings "
                f"({_differences(earlier, request.as_json())}); rerun it as it was, or pass "
                "--replace to start over (its stored evidence is then replaced)"
            )
    elif _has_evidence(warehouse, request.model_id) and not replace:
        raise EvaluationRefused(
            f"{warehouse}: the warehouse already holds evidence of {request.model_id!r} that no "
            "evaluation of this command recorded (other images or settings); pass --replace to "
            "replace it, or give this generator an id of its own"
        )
    # the request first: a kill while the old folder is removed leaves no folder that resumes
    recorded.unlink(missing_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    _write_plan(request, warehouse, folder)
    return folder, True


def _differences(earlier: dict, now: dict) -> str:
    changed = [k for k in sorted(set(earlier) | set(now)) if earlier.get(k, _MISSING) != now.get(k)]
    return ", ".join(f"{k}: {_shown(earlier, k)} then, {_shown(now, k)} now" for k in changed)


_MISSING = object()


def _shown(request: dict, key: str) -> str:
    return repr(request[key]) if key in request else "missing"


def _has_evidence(warehouse: Path, model_id: str) -> bool:
    import duckdb

    if not Path(warehouse).exists():
        return False
    with duckdb.connect(str(warehouse), read_only=True) as con:
        (n,) = con.execute(
            "select count(*) from raw.judgments where model_id = ?", [model_id]
        ).fetchone()
    return n > 0


def _write_plan(request: Request, warehouse: Path, folder: Path) -> None:
    """The plan into a scratch folder, evaluation.json beside it, then renamed into place: a
    killed start leaves no folder that looks begun."""
    from ingestion.store.plans import PlanError, make_plan_folder, write_every_prompt

    scratch = folder.with_name(f".{folder.name}.starting")
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        if request.budget is None:
            write_every_prompt(warehouse, scratch)
        else:
            make_plan_folder(
                warehouse,
                scratch,
                request.budget,
                request.strategy,
                request.seed,
                model=request.model_id,
            )
        (scratch / EVALUATION_FILE).write_text(
            json.dumps(request.as_json(), indent=1) + "\n", encoding="utf-8"
        )
        folder.parent.mkdir(parents=True, exist_ok=True)
        os.replace(scratch, folder)
    except PlanError as error:
        shutil.rmtree(scratch, ignore_errors=True)
        raise EvaluationRefused(str(error)) from None
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise


def prepare_evaluation(
    request: Request, warehouse: Path, replace: bool, log=print, progress_to=None
) -> Path:
    """Everything before the import: the checks, the plan (or the one a rerun finds), the
    images of a folder, the registry row, then the GPU assets. Returns the evaluation's folder."""
    if not Path(warehouse).exists():
        raise EvaluationRefused(
            f"{warehouse}: no published warehouse to evaluate against; run `qct2i demo` or "
            "`qct2i import DIR` and `qct2i build` first"
        )
    check_request(request)
    folder, started = start_or_resume(request, warehouse, replace)
    log(f"{'started' if started else 'resuming'} {folder}")
    if request.source == "images":
        add_images(request, folder, log)
    register(request)
    run_gpu_steps(request, folder, log=log, progress_to=progress_to)
    return folder


def add_images(request: Request, folder: Path, log=print) -> None:
    """The user's folder checked against the plan's prompts, then copied into the evaluation
    with a generators row of its own."""
    from ingestion.backends.drivers.calibration import upsert_generator_row
    from ingestion.backends.drivers.runs import read_rows
    from ingestion.sources.image_folder import (
        ImageFolderError,
        add_folder_images,
        read_image_folder,
    )

    prompt_ids = [row["prompt_id"] for row in read_rows(folder / "prompts.jsonl")]
    try:
        images = read_image_folder(Path(request.images), prompt_ids)
    except ImageFolderError as error:
        raise EvaluationRefused(str(error)) from None
    added = add_folder_images(images, request.model_id, folder)
    upsert_generator_row(folder, images_generator_row(request))
    log(f"images: {added} added from {request.images} ({len(images) - added} already there)")


def register(request: Request) -> None:
    """The user's generator in the warehouse's own registry (a registry row is used as it is)."""
    if request.source == "registry":
        return
    try:
        register_local_generator(registry_row(request))
    except RegistryError as error:
        raise EvaluationRefused(str(error)) from None


# Dagster's console logger at WARNING: its DEBUG event lines are not printed (the run's event
# log still records them)
QUIET_DAGSTER = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def run_gpu_steps(request: Request, folder: Path, log=print, progress_to=None) -> None:
    """Generate (unless the images came from a folder), judge and read text, each a
    materialisation of the GPU assets on the generator's partition, in this process; every
    asset skips what the folder already holds. `log` gets each step and its counts; the counts
    as they go (images drawn, judged, read, of how many) go to the stream `progress_to`: a live
    bar on a terminal, plain lines elsewhere (`ingestion.backends.drivers.progress`)."""
    from dagster_defs.assets.evidence import transcribed_images_asset
    from dagster_defs.assets.generation import generation_assets
    from dagster_defs.ml_resources import ml_resources_from_env
    from ingestion.backends.drivers.progress import for_stream, no_progress, watching

    if progress_to is not None and not progress_to.isatty():
        _plain_library_output()
    gpu = generation_assets()  # after `register`: the generator is one of its partitions
    resources = ml_resources_from_env()
    steps = (
        []
        if request.source == "images"
        else [
            (
                gpu.generated_images,
                dg.MultiPartitionKey({"generator": request.model_id, "shard": s}),
            )
            for s in map(str, range(gpu.shards))
        ]
    )
    steps += [
        (gpu.judged_images, request.model_id),
        (transcribed_images_asset(gpu), request.model_id),
    ]
    for asset, partition in steps:
        log(f"{asset.key.to_user_string()} [{partition}] ...")
        label = str(partition).replace("|", " shard ") if gpu.shards > 1 else request.model_id
        reporter = for_stream(progress_to, label) if progress_to is not None else no_progress
        with watching(reporter):
            result = dg.materialize(
                [asset],
                partition_key=partition,
                resources=resources,
                run_config={
                    "ops": {asset.op.name: {"config": {"bundle": str(folder)}}},
                    **QUIET_DAGSTER,
                },
                raise_on_error=False,
            )
        if not result.success:
            raise EvaluationRefused(f"{asset.key.to_user_string()} failed: {_failure(result)}")
        meta = [e.materialization.metadata for e in result.get_asset_materialization_events()]
        log("  " + _counts(meta[0] if meta else {}))


def _plain_library_output() -> None:
    """Off a terminal, the model libraries' own tqdm bars (loading a pipeline, its weights) are
    off too, so what is written holds no redrawn frames."""
    import importlib

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for library in ("diffusers", "transformers"):
        try:
            importlib.import_module(f"{library}.utils.logging").disable_progress_bar()
        except ImportError:  # not installed: nothing of it runs
            continue


def _failure(result) -> str:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data.error:
            return event.step_failure_data.error.message.strip()
    return "see the Dagster run's events"


COUNTED = ("planned", "drawn", "skipped", "images_judged", "questions", "transcribed")


def _counts(metadata) -> str:
    shown = [f"{k}={metadata[k].value}" for k in COUNTED if k in metadata]
    return ", ".join(shown) or "done"


DONE_FILE = "evaluated.json"  # written after the build that took this folder's evidence
EVIDENCE_FILES = (
    "generators.jsonl",
    "images.jsonl",
    "judgments.jsonl",
    "transcriptions.jsonl",
)


def evidence_fingerprint(folder: Path) -> str:
    """SHA-256 over the evidence files the import reads (absent files count as empty)."""
    digest = hashlib.sha256()
    for name in EVIDENCE_FILES:
        path = folder / name
        digest.update(name.encode() + b"\0")
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()


def is_done(folder: Path) -> bool:
    """Whether the last build already took every row the folder holds now."""
    done = folder / DONE_FILE
    if not done.exists():
        return False
    return json.loads(done.read_text(encoding="utf-8")).get("fingerprint") == (
        evidence_fingerprint(folder)
    )


def mark_done(folder: Path) -> None:
    partial = folder / f".{DONE_FILE}.partial"
    partial.write_text(json.dumps({"fingerprint": evidence_fingerprint(folder)}) + "\n", "utf-8")
    os.replace(partial, folder / DONE_FILE)


def result_lines(warehouse: Path, request: Request) -> list[str]:
    """The generator's rows per scope, with its interval, what its images cost in GPU-s (unknown
    when one came without its latency or GPU count) and why routing leaves it out, if it does."""
    import duckdb

    with duckdb.connect(str(warehouse), read_only=True) as con:
        gpu_s, untimed = con.execute(
            "select sum(latency_s * gpus), count(*) - count(latency_s * gpus) from raw.images "
            "where model_id = ?",
            [request.model_id],
        ).fetchone()
        excluded = _router_exclusion(con, request.model_id)
        if request.budget is None:
            rows = con.execute(
                "select l.language_scope, l.hcq_total, l.rank, r.rank_lo, r.rank_hi, "
                "l.evaluation from marts.fct_hcq_leaderboard l left join "
                "marts.fct_rank_reliability r using (model_id, language_scope) "
                "where l.model_id = ? order by l.language_scope",
                [request.model_id],
            ).fetchall()
            table = [f"{'scope':<10} {'HCQ':>7} {'rank':>5}  rank interval  evaluation"]
            table += [
                f"{scope:<10} {_points(total)} {rank or '–':>5}  "
                f"{_interval(lo, hi, 0):<13}  {evaluation}"
                for scope, total, rank, lo, hi, evaluation in rows
            ]
        else:
            rows = con.execute(
                "select language_scope, hcq_total, ci_lo, ci_hi, rank, rank_lo, rank_hi, "
                "n_prompts, strategy from marts.fct_subset_estimates where model_id = ? "
                "order by language_scope",
                [request.model_id],
            ).fetchall()
            table = [f"{'scope':<10} {'HCQ':>7}  {'95% interval':<15} {'rank':>5}  rank interval"]
            table += [
                f"{scope:<10} {_points(total)}  {_interval(lo, hi, 2):<15} {rank or '–':>5}  "
                f"{_interval(rlo, rhi, 0)}"
                for scope, total, lo, hi, rank, rlo, rhi, _, _ in rows
            ]
    how = "every prompt" if request.budget is None else f"a {request.strategy} plan"
    spent = "unknown" if gpu_s is None or untimed else f"{gpu_s:,.1f}"
    lines = [f"{request.model_id} on {how}: {spent} GPU-s for its images", *table]
    if excluded is not None:
        lines.append(f"no routing rows: {excluded}")
    return lines


def _router_exclusion(con, model_id: str) -> str | None:
    """Why routing leaves the generator out (marts.fct_router_excluded_generators), or None."""
    held = con.execute(
        "select count(*) from information_schema.tables where table_schema = 'marts' "
        "and table_name = 'fct_router_excluded_generators'"
    ).fetchone()[0]
    if not held:  # a warehouse built before the mart was
        return None
    row = con.execute(
        "select reason from marts.fct_router_excluded_generators where model_id = ?", [model_id]
    ).fetchone()
    return row[0] if row else None


def _points(value) -> str:
    return f"{value:7.2f}" if value is not None else f"{'–':>7}"


def _interval(lo, hi, decimals: int) -> str:
    if lo is None or hi is None:
        return "–"
    return f"[{lo:.{decimals}f}, {hi:.{decimals}f}]"


__all__ = [
    "EvaluationRefused",
    "Request",
    "Settings",
    "add_images",
    "check_request",
    "evaluation_folder",
    "images_generator_row",
    "is_done",
    "mark_done",
    "prepare_evaluation",
    "register",
    "registry_row",
    "result_lines",
    "run_gpu_steps",
    "start_or_resume",
]


# -- the Dagster job `evaluate_generator` -------------------------------------------------------


class EvaluateGeneratorConfig(dg.Config):
    """The run config of `evaluate_generator`: the flags of `qct2i evaluate`, by the same names."""

    model_id: str
    pipeline_class: str | None = None  # with weights: a diffusers pipeline class
    weights: str | None = None  # a folder or a hub id
    registry: bool = False  # a row of seeds/generators.csv
    images: str | None = None  # a folder of images drawn elsewhere
    steps: int = Settings.steps
    guidance: float = Settings.guidance
    guidance_arg: str = Settings.guidance_arg
    width: int = Settings.width
    height: int = Settings.height
    gpus: int = Settings.gpus
    call_kwargs: dict[str, Any] = PydanticField(default_factory=dict)
    budget: float | None = None  # None: every prompt
    strategy: str = "irt"
    seed: int = 0
    replace: bool = False
    official_judge: str | None = None

    def request(self) -> Request:
        return Request.of(dict(self))


@dg.op(
    description="qct2i evaluate as a Dagster step: plan, the GPU assets on the generator's "
    "partition, then the import_and_build job's import (append) and dbt build; logs the counts "
    "and the generator's rows."
)
def evaluate_generator_op(context: dg.OpExecutionContext, config: EvaluateGeneratorConfig):
    from ingestion.paths import warehouse_path

    request, warehouse = config.request(), warehouse_path()
    try:
        folder = prepare_evaluation(request, warehouse, config.replace, log=context.log.info)
    except EvaluationRefused as refused:
        raise dg.Failure(description=str(refused)) from None
    if is_done(folder):
        context.log.info(f"nothing new: the published warehouse holds every row of {folder}")
    else:
        _import_and_build(folder, request.model_id, config)
        mark_done(folder)
    lines = result_lines(warehouse, request)
    for line in lines:
        context.log.info(line)
    return dg.Output(None, metadata={"folder": str(folder), "rows": dg.MetadataValue.md(
        "```\n" + "\n".join(lines) + "\n```"
    )})  # fmt: skip


def _import_and_build(folder: Path, model_id: str, config: EvaluateGeneratorConfig) -> None:
    """The pipeline's `import_and_build` job on the evaluation's folder: the import asset appends
    it (replacing the generator's evidence with `replace`), the dbt assets build and publish, the
    report asset writes the report."""
    from dagster_defs.pipeline import import_and_build_job_def

    build_vars = {"official_judge": config.official_judge} if config.official_judge else {}
    run_config = {
        "ops": {
            "import_bundle": {
                "config": {
                    "folder": str(folder),
                    "append": True,
                    "replace_models": [model_id] if config.replace else [],
                }
            },
            "qct2i_dbt_models": {"config": {"vars": build_vars}},
        }
    }
    job = import_and_build_job_def()
    result = job.execute_in_process(run_config=run_config, raise_on_error=False)
    if not result.success:
        raise dg.Failure(description=f"import_and_build failed: {_failure(result)}")


@dg.job(
    name="evaluate_generator",
    description="A new generator from its checkpoint (or a folder of its images) to its rows on "
    "the leaderboard: `qct2i evaluate` as a job, its run config mirroring the command's flags "
    "(docs/evaluate.md).",
)
def evaluate_generator_job():
    evaluate_generator_op()
