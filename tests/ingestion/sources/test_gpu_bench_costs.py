"""A GPU bench JSON (`bench/gpu_bench.py`'s layout, written here by hand) read as measured costs:
the rows that finished become `generators` rows with where they were measured; a file that
cannot be costs is refused whole, naming why."""

from __future__ import annotations

import json
import math

import pytest

from ingestion.bundle import BundleError
from ingestion.sources.gpu_bench_costs import read_bench_costs

VERSIONS = {"torch": "2.11.0+cu130", "transformers": "5.17.0", "diffusers": "0.42.1"}


def bench_json(**changes) -> dict:
    document = {
        "mode": "gpu",
        "date": "2026-12-02T03:10:00+00:00",
        "gpu": [{"name": "NVIDIA H200", "driver": "580.159.04", "memory": "143771 MiB"}],
        "device": {"device_name": "NVIDIA H200", "torch_cuda": "13.0"},
        "versions": VERSIONS,
        "generators": [
            {"model_id": "flux1-dev", "status": "ok", "gpu_s_per_mp": 21.5},
            {"model_id": "my-finetune", "status": "ok", "gpu_s_per_mp": 4},
            {"model_id": "glm-image", "status": "timeout", "gpu_s_per_mp": None},
            {"model_id": "lens", "status": "not built: no diffusers pipeline class"},
        ],
        "judge": {"status": "ok"},
    }
    return document | changes


def written(tmp_path, document) -> object:
    path = tmp_path / "gpu_bench.json"
    path.write_text(json.dumps(document) if not isinstance(document, str) else document)
    return path


def test_finished_rows_become_measured_costs_with_where_they_were_measured(tmp_path):
    costs = read_bench_costs(written(tmp_path, bench_json()))
    assert (costs.gpu_model, costs.measured_at) == ("NVIDIA H200", "2026-12-02T03:10:00+00:00")
    flux, mine = costs.rows
    assert flux == {
        "model_id": "flux1-dev",
        "display_name": "FLUX.1-dev",  # seeds/generators.csv
        "cost_gpu_s_per_mp": 21.5,
        "hub_id": "black-forest-labs/FLUX.1-dev",
        "revision": None,
        "pipeline_class": "FluxPipeline",
        "cost_source": "measured",
        "cost_gpu_model": "NVIDIA H200",
        "cost_measured_at": "2026-12-02T03:10:00+00:00",
        "cost_versions": json.dumps(VERSIONS, sort_keys=True),
    }
    # a generator the registry does not know keeps its id as its name
    assert (mine["display_name"], mine["hub_id"], mine["cost_gpu_s_per_mp"]) == (
        "my-finetune",
        None,
        4.0,
    )
    assert costs.skipped == [
        ("glm-image", "timeout"),
        ("lens", "not built: no diffusers pipeline class"),
    ]


def test_the_gpu_model_falls_back_to_nvidia_smi(tmp_path):
    costs = read_bench_costs(written(tmp_path, bench_json(device={})))
    assert costs.gpu_model == "NVIDIA H200"


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"mode": "dry-run"}, "mode is 'dry-run', not 'gpu': a dry run's figures"),
        ({"device": {}, "gpu": None}, "names no GPU model"),
        ({"date": None}, "has no `date`"),
        ({"generators": {}}, "has no `generators` list"),
        ({"generators": [{"status": "timeout", "model_id": "x"}]}, "no generator row with a"),
    ],
)
def test_a_file_that_is_not_costs_is_refused(tmp_path, changes, reason):
    with pytest.raises(BundleError) as refused:
        read_bench_costs(written(tmp_path, bench_json(**changes)))
    assert f"gpu_bench.json: {reason}" in str(refused.value)


@pytest.mark.parametrize("figure", [math.nan, math.inf, 0, -3.0, "12", None, True])
def test_an_ok_row_without_a_positive_figure_is_named_and_the_others_taken(tmp_path, figure):
    """Guards against one noisy row on a device (the stand-in's dry run wrote "ok" rows at
    -272 GPU-s/MP) either throwing away every other measured figure or becoming a cost."""
    document = bench_json()
    document["generators"][1]["gpu_s_per_mp"] = figure
    path = tmp_path / "gpu_bench.json"
    path.write_text(json.dumps(document))  # NaN and Infinity as Python's json writes them
    costs = read_bench_costs(path)
    assert [row["model_id"] for row in costs.rows] == ["flux1-dev"]
    assert costs.skipped[0] == (
        "my-finetune",
        f"generators[1]: status ok but gpu_s_per_mp is {figure!r}, not a positive number",
    )


def test_a_failed_row_is_named_and_the_others_taken(tmp_path):
    """Guards against a row the bench failed (inconsistent timings, kept figures) being
    calibrated from its figures or refusing the file."""
    document = bench_json()
    failed = "failed: inconsistent: k_long [1.0, 1.3] s against k_short [1.1, 1.2] s"
    document["generators"][1] |= {"status": failed, "gpu_s_per_mp": -272.0}
    costs = read_bench_costs(written(tmp_path, document))
    assert [row["model_id"] for row in costs.rows] == ["flux1-dev"]
    assert ("my-finetune", failed) in costs.skipped


def test_a_file_whose_every_row_is_unusable_is_refused(tmp_path):
    """Guards against a file with nothing to calibrate passing as calibrated."""
    document = bench_json()
    for row in document["generators"][:2]:
        row["gpu_s_per_mp"] = -1.0
    with pytest.raises(BundleError) as refused:
        read_bench_costs(written(tmp_path, document))
    assert "no generator row with a measured cost" in str(refused.value)


def test_a_file_that_is_not_json_is_refused_with_its_line(tmp_path):
    with pytest.raises(BundleError) as refused:
        read_bench_costs(written(tmp_path, '{"mode": "gpu",\n "date": }'))
    assert "gpu_bench.json:2: not JSON (Expecting value, column 10)" in str(refused.value)


def test_a_row_timed_at_a_larger_batch_is_named_and_the_others_taken(tmp_path):
    """Guards against a `--batch 4` run's time per image (a call's time shared by its four
    images) entering the router beside other generators' one-image costs."""
    document = bench_json()
    document["generators"][1] |= {"batch": 4, "gpu_s_per_mp": 1.2}
    document["generators"][0] |= {"batch": 1}  # a batch-1 row says so and is taken
    costs = read_bench_costs(written(tmp_path, document))
    assert [row["model_id"] for row in costs.rows] == ["flux1-dev"]
    assert (
        "my-finetune",
        "generators[1]: measured at batch 4; a cost is one image a call",
    ) in costs.skipped
