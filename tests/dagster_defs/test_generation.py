"""The generation asset: a tiny Stable Diffusion built in code, loaded by DiffusionPipeline, run
through dagster.materialize by generator partition; then a crash after k images and a rerun."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import dagster as dg
import numpy as np
import pytest
from PIL import Image

from dagster_defs.assets.generation import FAIL_AFTER_ENV, generation_assets
from dagster_defs.ml_resources import ImageGeneratorResource, QuestionJudgeResource
from ingestion.backends.api.generators import image_seed
from ingestion.backends.drivers.progress import watching
from tests.ingestion.backends.recording_models import RecordingJudge

CONCEPTS = ("c001", "c002", "c003")
GPU = generation_assets()  # this environment's: every generator of the seed, its shard count
generated_images, judged_images = GPU.generated_images, GPU.judged_images


def _bundle(tmp_path: Path) -> Path:
    bundle = tmp_path / "gpu_bundle"
    bundle.mkdir()
    prompts = [
        {"prompt_id": f"{c}-{lang}", "concept_id": c, "language": lang, "source": "t", "text": text}
        for c in CONCEPTS
        for lang, text in (("en", f"a cat number {c}"), ("zh", f"一只猫 {c}"))
    ]
    (bundle / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
    questions = [
        {
            "prompt_id": p["prompt_id"],
            "question_id": f"{p['prompt_id']}-q{i}",
            "text": t,
            "capability": "animals",
            "parents": [] if i == 1 else [f"{p['prompt_id']}-q1"],
        }
        for p in prompts
        for i, t in ((1, "Is there a cat?"), (2, "Is the cat red?"))
    ]
    (bundle / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return bundle


def _materialize(asset, bundle, resources, generator="lens", instance=None):
    # generation is partitioned by generator x prompt shard (one shard unless configured)
    multi = isinstance(asset.partitions_def, dg.MultiPartitionsDefinition)
    partition = dg.MultiPartitionKey({"generator": generator, "shard": "0"}) if multi else generator
    return dg.materialize(
        [asset],
        partition_key=partition,
        resources=resources,
        run_config={"ops": {asset.op.name: {"config": {"bundle": str(bundle), "batch_size": 2}}}},
        raise_on_error=False,
        instance=instance,
    )


def _counts_logged(instance: dg.DagsterInstance, result) -> list[str]:
    """The progress lines of a run's logs (`runs` -> `progress.CountLines`), times cut off."""
    messages = [entry.user_message for entry in instance.all_logs(result.run_id)]
    return [m.split(" (")[0] for m in messages if re.match(r"lens: \d+ of \d+ images", m)]


def _meta(result, name: str) -> dict:
    (event,) = [
        e
        for e in result.get_asset_materialization_events()
        if e.asset_key == dg.AssetKey(["gpu", name])
    ]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def generator_resource(tiny_sd):
    return ImageGeneratorResource(profile="cpu", tiny_dir=str(tiny_sd.parent), device="cpu")


def test_generation_asset_draws_every_prompt_and_measures_cost(tmp_path, generator_resource):
    bundle = _bundle(tmp_path)
    result = _materialize(generated_images, bundle, {"image_generator": generator_resource})
    assert result.success
    rows = _rows(bundle / "images.jsonl")
    assert sorted(r["prompt_id"] for r in rows) == sorted(
        f"{c}-{x}" for c in CONCEPTS for x in ("en", "zh")
    )
    for row in rows:
        concept = row["prompt_id"].split("-")[0]
        assert row["seed"] == image_seed(concept, "lens")
        assert (row["model_id"], row["width"], row["height"], row["steps"]) == ("lens", 32, 32, 2)
        assert row["guidance"] == 1.0 and row["revision"].startswith("local-")
        assert row["latency_s"] > 0 and (row["gpus"], row["device"]) == (1, "cpu")  # one device
        assert row["latency_s"] == pytest.approx(row["batch_latency_s"] / row["batch_size"])
        with Image.open(bundle / row["path"]) as image:
            assert image.size == (32, 32)
    meta = _meta(result, "generated_images")
    device_s = sum(r["batch_latency_s"] for r in rows) / 2  # each batch listed on its 2 rows
    assert meta["drawn"] == 6 and meta["skipped"] == 0
    assert meta["gpu_s_per_mp"] == pytest.approx(device_s / (6 * 32 * 32 / 1e6))
    # both languages of a concept share a seed; the pipeline is seeded, so a rerun of a concept's
    # prompt reproduces its pixels: compare against a fresh draw through the backend
    spec = generator_resource.spec("lens")
    backend = generator_resource.load(spec)
    # loaded for the batch it will draw (which decides offload on a GPU): the resource's 4
    assert backend.batch_size == generator_resource.batch_size == 4
    assert backend.offloaded is False  # a CPU never offloads (no CUDA query)
    assert generator_resource.load(spec, 2).batch_size == 2
    first = next(r for r in rows if r["prompt_id"] == "c002-en")
    from ingestion.backends.api.interfaces import GenerationRequest

    again = backend.generate(
        [
            GenerationRequest(
                "c002-en", "c002", "en", "a cat number c002", "lens", first["seed"], 2, 1.0, 32, 32
            )
        ]
    )
    with Image.open(bundle / first["path"]) as stored:
        assert np.array_equal(np.asarray(stored), np.asarray(again.images[0]))


def test_a_crash_after_k_images_then_a_rerun_leaves_every_image_once(
    tmp_path, generator_resource, monkeypatch
):
    bundle = _bundle(tmp_path)
    monkeypatch.setenv(FAIL_AFTER_ENV, "3")  # batch 1 (2 images) recorded, batch 2 crashes
    crashed = _materialize(generated_images, bundle, {"image_generator": generator_resource})
    assert not crashed.success
    assert len(_rows(bundle / "images.jsonl")) == 2
    assert len(list((bundle / "images").rglob("*.png"))) == 3  # the in-flight PNG landed
    with (bundle / "images.jsonl").open("a") as f:
        f.write('{"image_id": "torn')  # a crash mid-append leaves a torn line
    monkeypatch.delenv(FAIL_AFTER_ENV)
    instance = dg.DagsterInstance.ephemeral()
    rerun = _materialize(
        generated_images, bundle, {"image_generator": generator_resource}, "lens", instance
    )
    assert rerun.success
    meta = _meta(rerun, "generated_images")
    assert (meta["skipped"], meta["drawn"]) == (2, 4)
    assert _counts_logged(instance, rerun) == [  # the run's logs: from the 2 kept, batch by batch
        f"lens: {n} of 6 images drawn" for n in (2, 4, 6)
    ]
    rows = _rows(bundle / "images.jsonl")
    ids = [r["image_id"] for r in rows]
    assert len(ids) == len(set(ids)) == 6
    assert sorted(p.name for p in (bundle / "images").rglob("*.png")) == sorted(
        Path(r["path"]).name for r in rows
    )
    third = _materialize(generated_images, bundle, {"image_generator": generator_resource})
    meta = _meta(third, "generated_images")
    assert (meta["skipped"], meta["drawn"]) == (6, 0)


def test_judge_asset_answers_every_question_of_every_image(
    tmp_path,
    generator_resource,
    tiny_vl,
):
    bundle = _bundle(tmp_path)
    judge = QuestionJudgeResource(profile="cpu", tiny_dir=str(tiny_vl.parent))
    instance, watched = dg.DagsterInstance.ephemeral(), []
    with watching(lambda *count: watched.append(count)):  # as `qct2i evaluate` watches
        drawn = _materialize(generated_images, bundle, {"image_generator": generator_resource})
    assert drawn.success
    result = _materialize(judged_images, bundle, {"question_judge": judge}, instance=instance)
    assert result.success
    assert [count[:3] for count in watched] == [(n, 6, "images drawn") for n in (0, 2, 4, 6)]
    assert _counts_logged(instance, result) == [  # the run's logs carry the counts
        "lens: 0 of 6 images judged, 0 questions judged",
        "lens: 6 of 6 images judged, 12 questions judged",
    ]
    rows = _rows(bundle / "judgments.jsonl")
    assert len(rows) == 12  # 6 images x 2 questions
    meta = _meta(result, "judged_images")
    for row in rows:
        assert row["judge_model"] == "tiny-qwen3-vl" and row["judge_revision"].startswith("local-")
        assert len(row["prompt_template_sha"]) == 16
        assert all(
            row[k] == meta[k] for k in ("judge_model", "judge_revision", "prompt_template_sha")
        )
        assert row["answer"] in ("yes", "no", None)
        if row["answer"] is None:
            assert row["p_yes"] is None and row["reason"] and row["raw_text"] is not None
        else:
            assert 0 <= row["p_yes"] <= 1
    again = _materialize(judged_images, bundle, {"question_judge": judge})
    assert _meta(again, "judged_images")["skipped"] == 6
    assert len(_rows(bundle / "judgments.jsonl")) == 12


def test_a_judge_change_answers_every_image_again(tmp_path, generator_resource, tiny_vl):
    """Judge A, then B (the same tiny model at another revision): B answers all 6 images; A run
    again skips all 6; each row names one of the two."""
    bundle = _bundle(tmp_path)
    judge_a = QuestionJudgeResource(profile="cpu", tiny_dir=str(tiny_vl.parent))
    judge_b = QuestionJudgeResource(
        profile="cpu", tiny_dir=str(tiny_vl.parent), revision="rev-b", judge_id="b"
    )
    assert _materialize(generated_images, bundle, {"image_generator": generator_resource}).success
    runs = [
        _meta(_materialize(judged_images, bundle, {"question_judge": j}), "judged_images")
        for j in (judge_a, judge_b, judge_a)
    ]
    assert [(m["images_judged"], m["skipped"]) for m in runs] == [(6, 0), (6, 0), (0, 6)]
    assert runs[1]["judge_revision"] == "rev-b" != runs[0]["judge_revision"]
    rows = _rows(bundle / "judgments.jsonl")
    assert Counter(r["judge_revision"] for r in rows) == {
        runs[0]["judge_revision"]: 12,
        "rev-b": 12,
    }
    # judge B answers under its own id, so the bundle holds both judges without a duplicate key
    assert Counter((r["judge_id"], r["judge_revision"]) for r in rows) == {
        ("default", runs[0]["judge_revision"]): 12,
        ("b", "rev-b"): 12,
    }


class _NeverLoadedJudge(QuestionJudgeResource):
    def load(self):
        raise AssertionError("the judge was loaded for a bundle that must be refused first")


_LOADED: list[RecordingJudge] = []  # the judges _RecordingJudgeResource loaded, in order


class _RecordingJudgeResource(QuestionJudgeResource):
    def load(self):
        _LOADED.append(RecordingJudge())
        return _LOADED[-1]


def _judge_with(bundle: Path, resource, **config):
    return dg.materialize(
        [judged_images],
        partition_key="lens",
        resources={"question_judge": resource},
        run_config={"ops": {judged_images.op.name: {"config": {"bundle": str(bundle), **config}}}},
    )


def test_an_image_path_outside_the_bundle_fails_the_judge_asset_before_the_judge_loads(tmp_path):
    bundle = _bundle(tmp_path)
    place = tmp_path.resolve()
    image = {"prompt_id": "c001-en", "model_id": "lens", "path": "../outside.png"}
    (bundle / "images.jsonl").write_text(json.dumps(image) + "\n")

    with pytest.raises(dg.Failure) as failed:
        _judge_with(bundle, _NeverLoadedJudge())

    assert failed.value.description == (
        f"bundle {bundle} refused (1 problems):\n"
        f'images.jsonl:1: path "../outside.png" resolves outside the bundle folder, to '
        f'"{place}/outside.png" (name its folder with --image-root DIR to allow it)'
    )
    assert not (bundle / "judgments.jsonl").exists()


def test_the_judge_asset_takes_image_roots_as_the_import_does(tmp_path):
    bundle = _bundle(tmp_path)
    shared = tmp_path.resolve() / "shared"
    shared.mkdir()
    image = {"prompt_id": "c001-en", "model_id": "lens", "path": f"{shared}/c001-en.png"}
    (bundle / "images.jsonl").write_text(json.dumps(image) + "\n")
    _LOADED.clear()

    with pytest.raises(dg.Failure, match="resolves outside the bundle folder"):
        _judge_with(bundle, _NeverLoadedJudge())
    result = _judge_with(bundle, _RecordingJudgeResource(), image_roots=[str(shared)])

    assert _meta(result, "judged_images")["images_judged"] == 1
    assert [judge.opened for judge in _LOADED] == [[f"{shared}/c001-en.png"]]
    assert [r["prompt_id"] for r in _rows(bundle / "judgments.jsonl")] == ["c001-en", "c001-en"]
