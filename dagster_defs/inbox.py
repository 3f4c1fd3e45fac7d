"""The inbox (issue 33; docs/deployment.md): a folder that a Dagster sensor watches, so that
evidence dropped into it is imported and published with no command, and a bad drop is refused
with its reason while the published warehouse stays as it was.

    <inbox>/<name>/              an evidence bundle, or a release folder (tiif, dsg, oneig: told
                                 apart by their layout, `ingestion.sources.releases.format_of`)
    <inbox>/images/<model_id>/   a generator's images drawn elsewhere (`qct2i evaluate --images`)
    <inbox>/done/...             what was taken (TAKEN.json: its hash, the run)
    <inbox>/rejected/...         what was refused (REFUSED.txt: why)

A folder is complete, and taken, once a file named READY is in it (written last by whoever drops
it); with QCT2I_INBOX_QUIET_S set, also once nothing in it changed for that many seconds. The run
key is the hash of the folder's content: the same content dropped twice is taken once (the second
copy is filed into done/ with TAKEN.json naming the first run). Each drop is one run of the job
`inbox_intake`, whose one op holds the warehouse writer pool for the whole intake (import, build,
publish: the pipeline's `import_and_build` in process, as `evaluate_generator` runs it), so intake
runs and other writers queue behind one another instead of interleaving.
"""

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from dagster_defs.assets.dbt import WAREHOUSE_WRITER_POOL
from dagster_defs.assets.ingestion import BUNDLE_CHECK
from ingestion.bundle.manifest import file_sha256
from ingestion.paths import warehouse_path
from ingestion.sources.image_folder import COMPLETION_MARKER

INBOX_ENV = "QCT2I_INBOX"  # the inbox folder; default `inbox/` beside the warehouse
SENSOR_ENV = "QCT2I_INBOX_SENSOR"  # "off": the sensor starts stopped (the UI can start it)
QUIET_ENV = "QCT2I_INBOX_QUIET_S"  # unset: a folder is complete only with READY in it
READY = COMPLETION_MARKER  # an images drop's marker is passed over by `evaluate --images` too
REFUSED = "REFUSED.txt"
TAKEN = "TAKEN.json"
IMAGES, DONE, REJECTED = "images", "done", "rejected"
RUN_KEY_TAG = "dagster/run_key"  # the tag Dagster gives a sensor's run
INBOX_TAG = "qct2i/inbox"  # the drop's place in the inbox, on its run

ONEIG_IMPORTS_NOTHING = (
    "a OneIG-Bench release holds questions but no answers, so there is nothing to import; write "
    "its question bank for the GPU path instead: qct2i import-release oneig --root DIR "
    "--questions-only --out DIR"
)


def inbox_path() -> Path:
    named = os.environ.get(INBOX_ENV)
    return Path(named).resolve() if named else warehouse_path().parent / "inbox"


def quiet_period_s() -> float | None:
    named = os.environ.get(QUIET_ENV)
    return float(named) if named else None


class Refused(Exception):
    """A drop that cannot be taken; the message is REFUSED.txt's. `imported`: the import had
    reached the working copy (made it from the published file) before the refusal."""

    def __init__(self, reason: str, imported: bool = False):
        super().__init__(reason)
        self.imported = imported


@dataclass(frozen=True)
class Drop:
    """A folder in the inbox: its kind (None: not recognised) and, under images/, its generator."""

    inbox: Path
    folder: Path
    kind: str | None
    model_id: str | None = None

    @property
    def place(self) -> str:
        """`<name>` or `images/<model_id>`: its place in the inbox, and in done/ or rejected/."""
        return self.folder.relative_to(self.inbox).as_posix()


def drops(inbox: Path) -> list[Drop]:
    """Every folder waiting in the inbox, complete or not."""
    found = []
    for entry in _subfolders(inbox):
        if entry.name in (DONE, REJECTED):
            continue
        if entry.name == IMAGES:
            found += [Drop(inbox, f, IMAGES, f.name) for f in _subfolders(entry)]
        else:
            found.append(Drop(inbox, entry, kind_of(entry)))
    return found


def _subfolders(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(e for e in folder.iterdir() if e.is_dir() and not e.name.startswith("."))


def kind_of(folder: Path) -> str | None:
    """A release's format by its layout, else `bundle` for a folder of bundle tables (or a
    release's manifest.json), else None."""
    from ingestion.bundle.format import TABLES
    from ingestion.bundle.manifest import has_manifest
    from ingestion.sources.releases import format_of

    release = format_of(folder)
    if release:
        return release
    tables = {f"{name}{suffix}" for name in TABLES for suffix in (".jsonl", ".parquet")}
    if has_manifest(folder) or any((folder / name).is_file() for name in tables):
        return "bundle"
    return None


def is_complete(folder: Path, quiet_s: float | None, now: float) -> bool:
    """READY is in it; or, with a quiet period, nothing in it changed for that long."""
    if (folder / READY).exists():
        return True
    if quiet_s is None:
        return False
    times = [p.stat().st_mtime for p in _files(folder)]
    return now - max(times, default=folder.stat().st_mtime) >= quiet_s


def _files(folder: Path) -> Iterator[Path]:
    return (p for p in sorted(folder.rglob("*")) if p.is_file())


def content_key(drop: Drop) -> str:
    """SHA-256 over the kind, the generator (an images folder's) and every file's relative path
    and content (its own SHA-256, the manifest's file hash), READY left out: the same content
    under another folder name has the same key."""
    digest = hashlib.sha256(f"{drop.kind}\0{drop.model_id or ''}\0".encode())
    for path in _files(drop.folder):
        relative = path.relative_to(drop.folder).as_posix()
        if relative == READY:
            continue
        digest.update(relative.encode() + b"\0" + file_sha256(path).encode() + b"\0")
    return digest.hexdigest()


def file_away(drop: Drop, shelf: str, note: str, text: str) -> Path:
    """Write `note` into the drop, then move it to `<inbox>/<shelf>/<place>` (a suffix when
    that is taken); returns where it went."""
    target = drop.inbox / shelf / drop.place
    if target.exists():
        target = target.with_name(f"{target.name}-{time.strftime('%Y%m%dT%H%M%S')}")
    (drop.folder / note).write_text(text, encoding="utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(drop.folder, target)
    return target


# -- the sensor -------------------------------------------------------------------------------


def inbox_run_request(drop: Drop, key: str) -> dg.RunRequest:
    config = {"folder": str(drop.folder), "kind": drop.kind or "", "content_key": key}
    if drop.model_id:
        config["model_id"] = drop.model_id
    return dg.RunRequest(
        run_key=key,
        run_config={"ops": {"take_inbox_drop": {"config": config}}},
        tags={INBOX_TAG: drop.place},
    )


def _earlier_run(instance: dg.DagsterInstance, key: str):
    runs = instance.get_runs(filters=dg.RunsFilter(tags={RUN_KEY_TAG: key}), limit=1)
    return runs[0] if runs else None


def evaluate_inbox(context: dg.SensorEvaluationContext):
    """The sensor's tick: a run request per complete drop never taken; a drop whose content a
    run already took is filed into done/ (or, refused before, into rejected/) with no run."""
    from ingestion.store.warehouse import Warehouse

    inbox = inbox_path()
    inbox.mkdir(parents=True, exist_ok=True)  # `make dev` on a fresh clone: ready to drop into
    working = Warehouse(warehouse_path()).working
    if working.exists():  # an intake must start from the published warehouse: see `take`
        return dg.SkipReason(f"waiting: {working} holds unpublished changes (build or remove it)")
    quiet_s, now, requests = quiet_period_s(), time.time(), []
    for drop in drops(inbox):
        if not is_complete(drop.folder, quiet_s, now):
            continue
        key = content_key(drop)
        earlier = _earlier_run(context.instance, key)
        if earlier is None:
            requests.append(inbox_run_request(drop, key))
        elif earlier.status == dg.DagsterRunStatus.SUCCESS:
            taken = {"content_key": key, "duplicate_of_run": earlier.run_id, "imported": False}
            file_away(drop, DONE, TAKEN, json.dumps(taken, indent=1) + "\n")
            context.log.info(f"{drop.place}: the same content as run {earlier.run_id}; filed")
        elif earlier.status == dg.DagsterRunStatus.FAILURE:
            why = f"the same content was refused before, by run {earlier.run_id} (its reason is "
            file_away(drop, REJECTED, REFUSED, why + "in that run and in rejected/)\n")
    return requests or dg.SkipReason(f"nothing complete and new in {inbox}")


def inbox_sensor() -> dg.SensorDefinition:
    """Running by default (`dagster dev` starts it); QCT2I_INBOX_SENSOR=off starts it stopped,
    and the UI's toggle turns it on or off either way."""
    from dagster_defs.pipeline import default_sensor_status

    return dg.SensorDefinition(
        name="inbox",
        evaluation_fn=evaluate_inbox,
        job=inbox_intake_job,
        minimum_interval_seconds=30,
        default_status=default_sensor_status(SENSOR_ENV),
        description=f"Takes what lands in the inbox ({INBOX_ENV}, default inbox/ beside the "
        "warehouse) once READY is in it: imports (appending), builds and publishes it, or "
        "refuses it into rejected/ with REFUSED.txt (docs/deployment.md).",
    )


# -- the run ----------------------------------------------------------------------------------


class InboxDropConfig(dg.Config):
    folder: str
    kind: str  # "bundle", "tiif", "dsg", "oneig", "images", or "" (not recognised)
    content_key: str
    model_id: str | None = None  # an images folder's generator


@dg.op(
    pool=WAREHOUSE_WRITER_POOL,
    description="Takes one inbox drop: converts a release, or judges and reads an images folder "
    "(the evaluate_generator steps), then the pipeline's import (append) and build; files the "
    "drop into done/, or refuses it into rejected/ with REFUSED.txt and the warehouse as it was.",
)
def take_inbox_drop(context: dg.OpExecutionContext, config: InboxDropConfig):
    folder = Path(config.folder)
    inbox = folder.parent.parent if config.kind == IMAGES else folder.parent
    drop = Drop(inbox, folder, config.kind or None, config.model_id)
    if not folder.is_dir():
        raise dg.Failure(description=f"{folder}: gone from the inbox before its run")
    try:
        lines = take(drop, context)
    except Refused as refused:
        place = file_away(drop, REJECTED, REFUSED, f"{refused}\n")
        raise dg.Failure(description=f"refused {drop.place} (now {place}): {refused}") from None
    taken = {"content_key": config.content_key, "run_id": context.run_id, "imported": True}
    place = file_away(drop, DONE, TAKEN, json.dumps({**taken, "log": lines}, indent=1) + "\n")
    context.log.info(f"took {drop.place}: now {place}")
    return dg.Output(None, metadata={"drop": drop.place, "filed": str(place)})


def take(drop: Drop, context: dg.OpExecutionContext) -> list[str]:
    """Import and build the drop, its log lines returned; Refused, with the warehouse as it was
    (published file unchanged, no working copy left), if any step refuses it."""
    from ingestion.store.warehouse import Warehouse

    warehouse = Warehouse(warehouse_path())
    if warehouse.working.exists():  # not this drop's fault, but never built into its run
        raise Refused(
            f"{warehouse.working} held unpublished changes when this drop's run started; build "
            "or remove them, then import this folder by hand (qct2i import --append DIR, then "
            "qct2i build): the inbox takes the same content once"
        )
    lines: list[str] = []

    def log(line: str) -> None:
        lines.append(line)
        context.log.info(line)

    try:
        _take(drop, context, log)
    except Refused as refused:
        if refused.imported:  # never another writer's: the import is what wrote it
            _discard_working_copy(warehouse)
        raise
    return lines


def _take(drop: Drop, context: dg.OpExecutionContext, log) -> None:
    if drop.kind is None:
        raise Refused(
            f"{drop.place}: not a bundle (no <table>.jsonl or .parquet, no manifest.json), not a "
            "release folder (tiif, dsg, oneig: docs/releases.md), and not under images/<model_id>/"
        )
    if drop.kind == "oneig":
        raise Refused(ONEIG_IMPORTS_NOTHING)
    if drop.kind == IMAGES:
        _take_images(drop, context, log)
    elif drop.kind == "bundle":
        import_and_build(drop.folder, context, log)
    else:
        _take_release(drop, context, log)


def _take_release(drop: Drop, context: dg.OpExecutionContext, log) -> None:
    """`qct2i import-release FORMAT --root DIR --append`'s conversion, then the import."""
    from ingestion.sources.release_common import ReleaseError
    from ingestion.sources.releases import convert_folder, summary

    with tempfile.TemporaryDirectory(prefix="qct2i-inbox-") as scratch:
        try:
            conversion = convert_folder(drop.kind, drop.folder, Path(scratch) / "bundle")
        except ReleaseError as error:
            raise Refused(str(error)) from None
        for line in summary(conversion):
            log(line)
        import_and_build(conversion.folder, context, log)


def _take_images(drop: Drop, context: dg.OpExecutionContext, log) -> None:
    """`qct2i evaluate MODEL_ID --images DIR`: plan (every prompt), check and copy the images,
    judge, read text (`dagster_defs.evaluation`), then the import."""
    from dagster_defs.evaluation import (
        EvaluationRefused,
        Request,
        is_done,
        mark_done,
        prepare_evaluation,
    )

    request = Request(model_id=drop.model_id or "", source=IMAGES, images=str(drop.folder))
    try:
        folder = prepare_evaluation(request, warehouse_path(), replace=False, log=log)
    except EvaluationRefused as refused:
        raise Refused(str(refused)) from None
    if is_done(folder):
        log(f"nothing new: the published warehouse holds every row of {folder}")
        return
    import_and_build(folder, context, log)
    mark_done(folder)


def import_and_build(bundle: Path, context: dg.OpExecutionContext, log) -> None:
    """The pipeline's `import_and_build` on `bundle`, appending, in this process (its own
    instance: this op already holds the writer pool); its materialisations are recorded on this
    run, so the UI shows the marts the drop published."""
    from dagster_defs.pipeline import import_and_build_job_def

    run_config = {"ops": {"import_bundle": {"config": {"folder": str(bundle), "append": True}}}}
    result = import_and_build_job_def().execute_in_process(
        run_config=run_config, raise_on_error=False
    )
    if not result.success:
        raise Refused(_first_failure(result), _import_reached_working_copy(result))
    for event in result.get_asset_materialization_events():
        materialization = event.materialization
        context.log_event(
            dg.AssetMaterialization(materialization.asset_key, metadata=materialization.metadata)
        )
    log(f"imported and published {bundle}")


def _import_reached_working_copy(result) -> bool:
    """The import step made the working copy (it copies the published file in before it
    validates) unless it failed on the writer lock: then the copy is another writer's."""
    for event in result.all_events:
        if event.step_key != "import_bundle":
            continue
        if event.is_step_failure:
            error = event.step_failure_data.error
            return not (error and error.cls_name == "WarehouseBusy")
        if event.is_step_success:
            return True
    return False


def _first_failure(result) -> str:
    """The refusal: a step's own description (the importer's problems), else its error, then
    every dbt test (asset check) that failed, by mart (the bundle's own checks left out: the
    importer's description already lists their problems)."""
    failed_checks = [
        f"  {check.asset_key.to_user_string()}: {check.check_name}"
        for event in result.all_events
        if event.event_type_value == "ASSET_CHECK_EVALUATION"
        and not (check := event.asset_check_evaluation_data).passed
        and check.check_name != BUNDLE_CHECK
    ]
    for event in result.all_events:
        if event.is_step_failure:
            failure = event.step_failure_data
            described = failure.user_failure_data and failure.user_failure_data.description
            reason = described or (failure.error.message.strip() if failure.error else "")
            break
    else:
        reason = "import_and_build failed (see the run's events)"
    if failed_checks:
        reason += "\nfailed dbt tests:\n" + "\n".join(failed_checks)
    return reason


def _discard_working_copy(warehouse) -> None:
    """The working copy this run's import wrote (the run started without one), removed under the
    writer lock: the next build starts from the published warehouse again."""
    from ingestion.store.warehouse import writer_lock, writer_wait_s

    with writer_lock(warehouse, "dagster inbox: discarding a refused drop", writer_wait_s()):
        for path in (warehouse.working, Path(f"{warehouse.working}.wal")):
            path.unlink(missing_ok=True)


@dg.job(
    name="inbox_intake",
    description="One drop of the inbox taken: imported (appending), built and published, or "
    "refused into rejected/ (docs/deployment.md). Started by the `inbox` sensor.",
)
def inbox_intake_job():
    take_inbox_drop()
