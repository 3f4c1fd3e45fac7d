"""Cost as the paper defines it (GPU-s/MP: latency x occupied GPUs / output megapixels), from
an untimed warm-up and batch-1 draws, written to the bundle's generators file and read by the
router's input mart.

The generator here is an ImageGenerator whose reported latencies are fixed in advance (a
schedule), so the expected figure follows by hand; it draws images of its own size, smaller than
requested, as a pipeline that rescales a request does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from PIL import Image

from ingestion.backends.api.generators import load_generator_specs
from ingestion.backends.api.interfaces import GeneratedBatch, GenerationRequest, ImageGenerator
from ingestion.backends.drivers.calibration import calibrate_cost, record_generator
from ingestion.backends.drivers.runs import generation_requests


class ScheduledLatencyGenerator(ImageGenerator):
    """Reports the next latency of `schedule` for each call; draws `size` images."""

    def __init__(self, schedule: Sequence[float], gpus: int, size: tuple[int, int]):
        self.model_id = "lens"
        self.schedule = list(schedule)
        self.gpus = gpus
        self.size = size
        self.calls: list[int] = []  # batch sizes

    def generate(self, requests: Sequence[GenerationRequest]) -> GeneratedBatch:
        self.calls.append(len(requests))
        return GeneratedBatch(
            requests=tuple(requests),
            images=tuple(Image.new("RGB", self.size) for _ in requests),
            latency_s=self.schedule.pop(0),
            gpus=self.gpus,
            device="cuda",
            revision="rev-1",
        )


PROMPTS = [
    {"prompt_id": f"c{i}-en", "concept_id": f"c{i}", "language": "en", "text": f"a cat {i}"}
    for i in range(6)
]


def test_calibration_excludes_the_warm_up_and_counts_drawn_megapixels():
    spec = load_generator_specs()["lens"]  # requests 1024x1024
    generator = ScheduledLatencyGenerator([50.0, 2.0, 2.0, 2.0], gpus=2, size=(512, 256))
    calibration = calibrate_cost(generator, generation_requests(spec, PROMPTS), n_images=3)
    # by hand: 3 x (2.0 s x 2 GPUs) / 3 x (512 x 256 / 1e6 MP) = 4 / 0.131072
    assert calibration.gpu_s_per_mp == pytest.approx(30.517578125)
    assert generator.calls == [1, 1, 1, 1]  # a warm-up and three batch-1 draws
    assert calibration.warmup_latency_s == 50.0 and calibration.n_images == 3
    assert (calibration.width, calibration.height, calibration.gpus) == (512, 256, 2)


def test_a_generator_row_is_replaced_not_repeated(tmp_path):
    specs = load_generator_specs()
    for latency in (2.0, 4.0):
        generator = ScheduledLatencyGenerator([9.0, latency], gpus=1, size=(1000, 1000))
        calibration = calibrate_cost(generator, generation_requests(specs["lens"], PROMPTS), 1)
        record_generator(tmp_path, specs["lens"], "rev-1", calibration)
    record_generator(tmp_path, specs["flux1-dev"], "rev-2", None)
    rows = [json.loads(line) for line in (tmp_path / "generators.jsonl").read_text().splitlines()]
    assert [(r["model_id"], r["cost_gpu_s_per_mp"], r["cost_source"]) for r in rows] == [
        ("lens", 4.0, "measured"),  # 4 s x 1 GPU / 1 MP: the second calibration
        ("flux1-dev", None, None),
    ]
    assert rows[0]["hub_id"] == "microsoft/Lens" and rows[0]["revision"] == "rev-1"


@pytest.mark.dbt
def test_a_measured_cost_reaches_the_router(tmp_path):
    """A simulated bundle of two generators; lens gets a calibrated cost. The router's input
    (fct_router_profiles) carries it as `measured`; flux1-dev keeps the mean over its images,
    recomputed here from images.jsonl."""
    from ingestion.sources.simulator import SimulationConfig, simulate
    from tests.helpers import build_warehouse, query

    config = SimulationConfig(concepts=12, models=["lens", "flux1-dev"])
    bundle = simulate(tmp_path / "bundle", config).out_dir
    images = [json.loads(line) for line in (bundle / "images.jsonl").read_text().splitlines()]
    flux = [
        r["latency_s"] * r["gpus"] / (r["width"] * r["height"] / 1e6)
        for r in images
        if r["model_id"] == "flux1-dev"
    ]
    spec = load_generator_specs()["lens"]
    generator = ScheduledLatencyGenerator([30.0, 1.5], gpus=2, size=(1024, 1024))
    calibration = calibrate_cost(generator, generation_requests(spec, PROMPTS), 1)
    record_generator(bundle, spec, "rev-1", calibration)
    rows = (bundle / "generators.jsonl").read_text().splitlines()
    assert sorted(json.loads(r)["model_id"] for r in rows) == ["flux1-dev", "lens"]  # replaced

    warehouse = build_warehouse(
        bundle,
        tmp_path / "w.duckdb",
        select=("+fct_router_profiles",),
        extra=("--indirect-selection", "cautious"),  # singular tests read marts left out
    )
    costs = dict(
        (m, (c, s))
        for m, c, s in query(
            warehouse,
            "select distinct model_id, cost_gpu_s_per_mp, cost_source "
            "from marts.fct_router_profiles",
        )
    )
    assert costs["lens"][1] == "measured"
    assert costs["lens"][0] == pytest.approx(1.5 * 2 / (1024 * 1024 / 1e6))
    assert costs["flux1-dev"][1] == "measured"
    assert costs["flux1-dev"][0] == pytest.approx(sum(flux) / len(flux))


def test_the_generation_asset_records_its_measured_cost_and_provenance(tmp_path, tiny_sd):
    """dagster.materialize of the generation asset (tiny Stable Diffusion on CPU): the bundle's
    generators row carries the calibration (cost_source measured) and every image row its
    seed, steps, guidance, generator revision and backend."""
    import dagster as dg

    from dagster_defs.assets.generation import generation_assets
    from dagster_defs.ml_resources import ImageGeneratorResource

    generated_images = generation_assets().generated_images

    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PROMPTS[:2]))
    resource = ImageGeneratorResource(profile="cpu", tiny_dir=str(tiny_sd.parent), device="cpu")
    config = {"bundle": str(bundle), "batch_size": 2, "calibration_images": 2}
    result = dg.materialize(
        [generated_images],
        partition_key="lens|0",  # generator|prompt shard (one shard by default)
        resources={"image_generator": resource},
        run_config={"ops": {generated_images.op.name: {"config": config}}},
    )
    (generator_row,) = [
        json.loads(x) for x in (bundle / "generators.jsonl").read_text().split("\n") if x
    ]
    assert generator_row["cost_source"] == "measured" and generator_row["calibration_images"] == 2
    # on CPU a run counts as one device: the figure is the mean latency over 32x32 output
    expected = generator_row["calibration_latency_s"] / (32 * 32 / 1e6)
    assert generator_row["cost_gpu_s_per_mp"] == pytest.approx(expected)
    (event,) = result.get_asset_materialization_events()
    metadata = {k: v.value for k, v in event.materialization.metadata.items()}
    assert metadata["measured_gpu_s_per_mp"] == generator_row["cost_gpu_s_per_mp"]
    rows = [json.loads(x) for x in (bundle / "images.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert row["backend"] == "diffusers" and row["generator_revision"].startswith("local-")
        assert (row["steps"], row["guidance"], row["width"], row["height"]) == (2, 1.0, 32, 32)
