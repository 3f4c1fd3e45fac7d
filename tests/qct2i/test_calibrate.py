"""`qct2i calibrate FILE` (issue 23): GPU bench JSONs (`bench/gpu_bench.py`'s layout, written here
by hand) calibrate the small demo warehouse's generators, a real `qct2i build` publishes them, and
the router marts use each measured cost and say where it was measured: two JSONs from two GPU
models make `mixed_cost_gpus` true, and the report's routing section warns."""

from __future__ import annotations

import json

import pytest

from reporting.reader import open_reader
from reporting.sections.routing import cost_gpus_note
from tests.helpers import copy_warehouse, query, run_main

H200, A100 = "NVIDIA H200", "NVIDIA A100-SXM4-80GB"
# a row the bench failed, its figures kept (the stand-in's dry run once called such rows "ok")
FAILED = "failed: per_step_s is -0.29, not a positive finite number"


def bench_file(folder, gpu: str, costs: dict[str, float]):
    path = folder / f"{gpu.split()[-1]}.json"
    rows = [{"model_id": m, "status": "ok", "gpu_s_per_mp": c} for m, c in costs.items()]
    rows.append({"model_id": "glm-image", "status": "timeout"})
    rows.append({"model_id": "ernie-image", "status": FAILED, "gpu_s_per_mp": -586.0})
    document = {
        "mode": "gpu",
        "date": "2026-12-02T03:10:00+00:00",
        "device": {"device_name": gpu},
        "versions": {"torch": "2.11.0+cu130", "diffusers": "0.42.1"},
        "generators": rows,
    }
    path.write_text(json.dumps(document))
    return path


@pytest.fixture(scope="module")
def calibrated(small_demo, tmp_path_factory):
    folder = tmp_path_factory.mktemp("calibrate")
    warehouse = copy_warehouse(small_demo[0], folder)
    h200 = bench_file(folder, H200, {"flux1-dev": 21.5, "qwen-image": 30.25})
    a100 = bench_file(folder, A100, {"z-image-turbo": 3.75})
    said = [run_main(["calibrate", str(path)], warehouse) for path in (h200, a100)]
    built = run_main(["build"], warehouse)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return warehouse, said


def test_calibrate_says_what_it_took_and_what_it_left(calibrated):
    """Guards against a file with one failed row being refused whole (every measured figure
    lost) and against the failed row going unnamed."""
    _, (h200, a100) = calibrated
    assert h200.returncode == a100.returncode == 0, h200.stderr + a100.stderr
    assert h200.stdout.splitlines()[:2] == [
        f"calibrated 2 generators (GPU-s/MP measured on {H200}, 2026-12-02T03:10:00+00:00): "
        "flux1-dev 21.50, qwen-image 30.25",
        f"no figure, left as they were: glm-image (timeout), ernie-image ({FAILED})",
    ]
    assert "`qct2i build` publishes it" in a100.stdout


def test_the_router_uses_each_measured_cost_with_its_gpu(calibrated):
    warehouse, _ = calibrated
    profiles = dict(
        (model, (source, gpu, cost))
        for model, source, gpu, cost in query(
            warehouse,
            "select distinct model_id, cost_source, cost_gpu_model, cost_gpu_s_per_mp "
            "from marts.fct_router_profiles",
        )
    )
    assert profiles["flux1-dev"] == ("measured", H200, 21.5)
    assert profiles["qwen-image"] == ("measured", H200, 30.25)
    assert profiles["z-image-turbo"] == ("measured", A100, 3.75)
    assert profiles["glm-image"][1] is None  # its run timed out: not calibrated
    assert profiles["ernie-image"][1] is None  # failed: its -586 never became a cost
    # a fixed router sends every request to its generator: its mean cost is that cost
    fixed = query(
        warehouse,
        "select router, gpu_s_per_mp from marts.agg_router_summary "
        "where router in ('fixed:flux1-dev', 'fixed:z-image-turbo') order by router",
    )
    assert fixed == [("fixed:flux1-dev", 21.5), ("fixed:z-image-turbo", 3.75)]


def test_costs_from_two_gpu_models_are_flagged_in_the_marts_and_the_report(calibrated, small_demo):
    warehouse, _ = calibrated
    flags = query(
        warehouse,
        "select distinct cost_gpu_models, mixed_cost_gpus from marts.agg_router_summary",
    )
    assert flags == [(f"{A100}, {H200}", True)]
    with open_reader(warehouse) as reader:
        assert f"different GPU models ({A100}, {H200})" in cost_gpus_note(reader)
    # the demo's own build: costs from its images, none calibrated, nothing to flag
    before = query(
        small_demo[0],
        "select distinct cost_gpu_models, mixed_cost_gpus from marts.agg_router_summary",
    )
    assert before == [(None, False)]
    with open_reader(small_demo[0]) as reader:
        assert cost_gpus_note(reader) == ""


def test_a_dry_run_is_refused_and_nothing_is_written(small_demo, tmp_path):
    warehouse = copy_warehouse(small_demo[0], tmp_path)
    path = bench_file(tmp_path, H200, {"flux1-dev": 1.0})
    path.write_text(path.read_text().replace('"mode": "gpu"', '"mode": "dry-run"'))
    refused = run_main(["calibrate", str(path)], warehouse)
    assert refused.returncode == 2
    assert "H200.json: mode is 'dry-run', not 'gpu'" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert not warehouse.with_name("w.working.duckdb").exists()  # the warehouse never opened
