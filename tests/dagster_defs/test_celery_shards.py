"""One generator spread over two Celery workers by Dagster's own executor (dagster-celery).

A local Redis (Debian's redis-server) is broker and result backend; two workers
(`dagster-celery worker start`, one slot each, queue `gpu`) load the project's GPU code location
(dagster_defs/distributed.py) with the tiny Stable Diffusion; two `dagster asset materialize`
runs draw the two prompt shards of one generator at once. Every prompt must be drawn exactly
once: 0 images lost, 0 duplicated, both languages of a concept in the same shard. Then, on a
fresh bundle, the worker drawing shard 0 is SIGKILLed mid-shard (its whole process group, as a
node dies), the shard is rerun on the surviving worker, and the same holds.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest

from dagster_defs.assets.generation import FAIL_AFTER_ENV, GPU_POOL, generation_assets
from tests.helpers import running_under_ci

pytestmark = pytest.mark.e2e  # Redis, two Celery workers, a killed worker

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GENERATOR = "lens"
SHARDS = 2
OP = generation_assets().generated_images.op.name
DEADLINE_S = 420  # generous: two CPUs shared by two workers and two run coordinators


def _require(name: str, path: str | None) -> str:
    """The executable, or a skip (a failure under CI=true, which must not pass without it)."""
    if path and Path(path).exists():
        return path
    message = f"{name} is not installed (Debian's redis-server; the dev extra's dagster-celery)"
    if running_under_ci():
        pytest.fail(f"{message}; CI=true requires it", pytrace=False)
    pytest.skip(f"{message} (under CI=true this fails)")


def _shard_of(concept_id: str) -> int:
    # the test's own reference: the digest read as one big-endian integer
    return int.from_bytes(hashlib.sha256(concept_id.encode()).digest(), "big") % SHARDS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(what: str, ready, logs: list[Path] = (), deadline_s: float = DEADLINE_S):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        value = ready()
        if value:
            return value
        time.sleep(0.1)
    tails = "\n".join(f"--- {p}\n{p.read_text(errors='replace')[-3000:]}" for p in logs)
    pytest.fail(f"timed out waiting for {what}\n{tails}", pytrace=False)


class Cluster:
    """Redis, Celery workers and run coordinators as process groups of their own."""

    def __init__(self, root: Path, tiny_models: Path):
        self.root = root
        self.procs: list[subprocess.Popen] = []
        self.port = _free_port()
        self.broker = f"redis://127.0.0.1:{self.port}/0"
        self.home = root / "dagster_home"
        self.home.mkdir()
        # the GPU pool sized to the "GPU" count, as docs/distributed_generation.md sets it
        pool = f"concurrency:\n  pools:\n    default_limit: {SHARDS}\n"
        (self.home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n" + pool)
        with self.instance() as instance:  # its SQLite storages made once, before the workers
            instance.get_runs(limit=1)  # race to create them ("table run_tags already exists")
        self.worker_config = root / "celery.yaml"
        settings = {"task_acks_late": True, "worker_prefetch_multiplier": 1}
        self.worker_config.write_text(
            json.dumps(  # YAML is a superset of JSON
                {
                    "execution": {
                        "config": {
                            "broker": self.broker,
                            "backend": self.broker,
                            "config_source": settings,
                        }
                    }
                }
            )
        )
        self.env = {
            **os.environ,
            "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": str(REPO),
            "DAGSTER_HOME": str(self.home),
            "QCT2I_CELERY_BROKER": self.broker,
            "QCT2I_GENERATION_SHARDS": str(SHARDS),
            "QCT2I_ML_PROFILE": "cpu",
            "QCT2I_TINY_MODELS": str(tiny_models),
            "QCT2I_GENERATOR_DEVICE": "cpu",
            "QCT2I_WAREHOUSE": str(root / "warehouse" / "qct2i.duckdb"),
            "HF_HUB_OFFLINE": "1",
        }
        self.env.pop(FAIL_AFTER_ENV, None)  # no injected crash here

    def start(self, name: str, args: list[str]) -> subprocess.Popen:
        log = (self.root / f"{name}.log").open("w")
        proc = subprocess.Popen(
            args,
            cwd=REPO,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: a SIGKILL takes all its children
        )
        proc.log_path = Path(log.name)
        self.procs.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen) -> None:
        with contextlib.suppress(ProcessLookupError):  # already gone
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def close(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                self.kill(proc)

    def start_redis(self, redis_server: str) -> None:
        data = self.root / "redis"
        data.mkdir()
        args = [redis_server, "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--dir", str(data), "--save", "", "--appendonly", "no"]
        proc = self.start("redis", args)

        def answers() -> bool:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    return s.recv(16).startswith(b"+PONG")
            except OSError:
                return False

        _wait_for("redis-server", answers, [proc.log_path], 30)

    def start_worker(self, name: str, dagster_celery: str) -> subprocess.Popen:
        args = [dagster_celery, "worker", "start", "-n", name, "-y", str(self.worker_config)]
        args += ["-A", "dagster_celery.app", "-q", "gpu", "--", "-c", "1"]
        return self.start(name, args)

    def materialize(self, name: str, bundle: Path, shard: int, calibration_images: int = 0):
        config = {"bundle": str(bundle), "batch_size": 1, "calibration_images": calibration_images}
        args = [str(BIN / "dagster"), "asset", "materialize", "-m", "dagster_defs.distributed"]
        args += ["--select", "gpu/generated_images", "--partition", f"{GENERATOR}|{shard}"]
        args += ["--config-json", json.dumps({"ops": {OP: {"config": config}}})]
        return self.start(name, args)

    def materialize_holding_a_slot(self, name: str, bundle: Path, shard: int, **options):
        """A run started, returned once it holds its GPU slot (or has ended).

        Dagster's SQLite storage does not serialise slot claims: a claim reads a free slot, then
        writes its run into it without checking it is still free, so two runs claiming at the
        same instant can both take one slot, and the first to finish frees the other's (seen in
        CI). Postgres storage reads it FOR UPDATE SKIP LOCKED (docs/distributed_generation.md).
        So the test's runs claim one after the other; they still draw at the same time."""
        before = self.slot_holders()
        run = self.materialize(name, bundle, shard, **options)

        def holds_or_ended() -> bool:
            return bool(self.slot_holders() - before) or run.poll() is not None

        _wait_for(f"{name} to hold a slot", holds_or_ended, [run.log_path])
        return run

    def slot_holders(self) -> set[str]:
        with self.instance() as instance:
            info = instance.event_log_storage.get_concurrency_info(GPU_POOL)
            return {slot.run_id for slot in info.claimed_slots}

    def instance(self) -> dg.DagsterInstance:
        return dg.DagsterInstance.from_config(str(self.home))

    def worker_of_shard(self, bundle: Path) -> dict[int, str]:
        """shard -> the Celery worker that took its step, from the runs' engine events."""
        found = {}
        with self.instance() as instance:
            for run in _runs_of(instance, bundle):
                shard = int(run.tags["dagster/partition/shard"])
                for record in instance.all_logs(
                    run.run_id, of_type=dg.DagsterEventType.ENGINE_EVENT
                ):
                    metadata = record.dagster_event.engine_event_data.metadata
                    if "Celery worker" in metadata:
                        found[shard] = metadata["Celery worker"].value
        return found


def _runs_of(instance: dg.DagsterInstance, bundle: Path) -> list:
    return [
        run
        for run in instance.get_runs()
        if run.run_config["ops"][OP]["config"]["bundle"] == str(bundle)
    ]


def _bundle(root: Path, concepts: int) -> tuple[Path, list[dict]]:
    bundle = root / "bundle"
    bundle.mkdir(parents=True)
    prompts = [
        {"prompt_id": f"c{i:03d}-{lang}", "concept_id": f"c{i:03d}", "language": lang}
        | {"source": "t", "text": f"{'a cat' if lang == 'en' else '一只猫'} {i}"}
        for i in range(concepts)
        for lang in ("en", "zh")
    ]
    (bundle / "prompts.jsonl").write_text(
        "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in prompts), encoding="utf-8"
    )
    return bundle, prompts


def _rows(bundle: Path) -> list[dict]:
    path = bundle / "images.jsonl"
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return [json.loads(line) for line in lines if line.endswith("\n")]


def _drawn_in_shard(bundle: Path, shard: int) -> int:
    return sum(_shard_of(r["prompt_id"].split("-")[0]) == shard for r in _rows(bundle))


def _assert_each_prompt_drawn_once(bundle: Path, prompts: list[dict]) -> None:
    rows = _rows(bundle)
    counts = Counter(r["prompt_id"] for r in rows)
    lost = [p["prompt_id"] for p in prompts if p["prompt_id"] not in counts]
    duplicated = [p for p, n in counts.items() if n > 1]
    assert (lost, duplicated) == ([], [])
    assert set(counts) == {p["prompt_id"] for p in prompts}
    assert len({r["image_id"] for r in rows}) == len(prompts)
    pngs = sorted(p.relative_to(bundle).as_posix() for p in (bundle / "images").rglob("*.png"))
    assert pngs == sorted(r["path"] for r in rows)
    assert not list((bundle / "images").rglob("*.partial"))
    assert all(r["model_id"] == GENERATOR and r["device"] == "cpu" for r in rows)


def _wait_ok(proc: subprocess.Popen) -> None:
    _wait_for(f"{proc.args[:4]}", lambda: proc.poll() is not None, [proc.log_path])
    assert proc.returncode == 0, proc.log_path.read_text(errors="replace")[-4000:]


@pytest.fixture
def cluster(tmp_path, tiny_sd):
    redis_server = _require("redis-server", shutil.which("redis-server") or "/usr/bin/redis-server")
    dagster_celery = _require("dagster-celery", shutil.which("dagster-celery", path=str(BIN)))
    _require("celery", shutil.which("celery", path=str(BIN)))
    nodes = Cluster(tmp_path, tiny_sd.parent)
    try:
        nodes.start_redis(redis_server)
        workers = [nodes.start_worker(name, dagster_celery) for name in ("w1", "w2")]
        for worker in workers:
            _wait_for(
                f"worker {worker.args[4]}",
                lambda w=worker: " ready." in w.log_path.read_text(errors="replace"),
                [worker.log_path],
                120,
            )
        nodes.workers = dict(zip(("w1", "w2"), workers, strict=True))
        yield nodes
    finally:
        nodes.close()


def test_two_workers_draw_two_shards_then_a_killed_worker_s_shard_is_rerun(tmp_path, cluster):
    # two shards at once, on two workers; shard 0 also measures the generator's cost
    bundle, prompts = _bundle(tmp_path / "first", 8)
    shards = Counter(_shard_of(p["concept_id"]) for p in prompts)
    assert set(shards) == {0, 1}  # both shards have work
    runs = [
        cluster.materialize_holding_a_slot(f"run{s}", bundle, s, calibration_images=int(s == 0))
        for s in (0, 1)
    ]
    for run in runs:
        _wait_ok(run)
    _assert_each_prompt_drawn_once(bundle, prompts)
    workers = cluster.worker_of_shard(bundle)
    assert sorted(workers) == [0, 1] and workers[0] != workers[1]
    assert {w.split("@")[0] for w in workers.values()} == {"w1", "w2"}
    generator_rows = _rows_of_file(bundle / "generators.jsonl")
    assert [(r["model_id"], r["cost_source"]) for r in generator_rows] == [(GENERATOR, "measured")]

    # a fresh bundle; the worker drawing shard 0 dies mid-shard; shard 0 is run again
    bundle, prompts = _bundle(tmp_path / "second", 24)
    planned = Counter(_shard_of(p["concept_id"]) for p in prompts)
    runs = [cluster.materialize_holding_a_slot(f"kill-run{s}", bundle, s) for s in (0, 1)]
    _wait_for(
        "shard 0 to be under way", lambda: _drawn_in_shard(bundle, 0) >= 2, [runs[0].log_path]
    )
    owner = _wait_for("shard 0's worker", lambda: cluster.worker_of_shard(bundle).get(0))
    cluster.kill(cluster.workers[owner.split("@")[0]])
    drawn_when_killed = _drawn_in_shard(bundle, 0)
    assert drawn_when_killed < planned[0]  # it died mid-shard
    _wait_ok(runs[1])  # the other worker's shard is unaffected
    assert _drawn_in_shard(bundle, 1) == planned[1]
    cluster.kill(runs[0])  # its coordinator waits on a task no worker holds any more
    with cluster.instance() as instance:
        # the dead run still holds its slot of the GPU pool; marking it failed and freeing the
        # slot is what the daemon's run monitoring does (docs/distributed_generation.md)
        (dead,) = [r for r in _runs_of(instance, bundle) if not r.is_finished]
        held = instance.event_log_storage.get_concurrency_info(GPU_POOL)
        assert held.slot_count == SHARDS
        assert [slot.run_id for slot in held.claimed_slots] == [dead.run_id]
        instance.report_run_failed(dead)
        instance.event_log_storage.free_concurrency_slots_for_run(dead.run_id)
    rerun = cluster.materialize("rerun0", bundle, 0)
    _wait_ok(rerun)
    _assert_each_prompt_drawn_once(bundle, prompts)
    with cluster.instance() as instance:
        (record,) = instance.fetch_materializations(  # the newest: the rerun's
            dg.AssetRecordsFilter(
                asset_key=dg.AssetKey(["gpu", "generated_images"]),
                asset_partitions=[f"{GENERATOR}|0"],
            ),
            limit=1,
        ).records
        meta = {k: v.value for k, v in record.asset_materialization.metadata.items()}
        assert instance.event_log_storage.get_concurrency_info(GPU_POOL).claimed_slots == []
    assert meta["skipped"] >= drawn_when_killed and meta["drawn"] > 0  # resumed, not redrawn
    assert meta["skipped"] + meta["drawn"] == meta["planned"] == planned[0]


def _rows_of_file(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
