"""The OCR asset through dagster.materialize on a tiny Qwen3-VL (forced answer, see
tests/ingestion/backends/forced_answers.py): every image with a text target is read once, the
OCR model and revision on every row; a reading cut at the token limit is written `unavailable`
with reason `truncated` and counted in the metadata, never dropped."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest
from PIL import Image

from dagster_defs.assets.evidence import (
    attributed_questions,
    constructed_questions,
    transcribed_images_asset,
)
from dagster_defs.assets.generation import generation_assets
from dagster_defs.ml_resources import QuestionWriterResource, TextTranscriberResource
from ingestion.backends.tiny.models import build_tiny_qwen3_vl
from tests.ingestion.backends.forced_answers import force_answer
from tests.ingestion.backends.recording_models import RecordingReader

ANSWER = '{"blocks": ["hello", "open"]}'
WITH_TEXT = ("c001-en", "c002-en")  # prompts with a text target; c003-en has none


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory) -> Path:
    """The resource's tiny-model folder, holding a Qwen3-VL that answers ANSWER."""
    root = tmp_path_factory.mktemp("tiny_ocr")
    build_tiny_qwen3_vl(root / "qwen3_vl")
    force_answer(root / "qwen3_vl", ANSWER)
    return root


def _bundle(tmp_path: Path) -> Path:
    bundle = tmp_path / "gpu_bundle"
    (bundle / "images" / "lens").mkdir(parents=True)
    images, questions = [], []
    for i, prompt in enumerate(("c001-en", "c002-en", "c003-en")):
        Image.new("RGB", (32, 32), (60 * i, 20, 200)).save(bundle / "images/lens" / f"{prompt}.png")
        images.append(
            {"prompt_id": prompt, "model_id": "lens", "path": f"images/lens/{prompt}.png"}
        )
        target = "hello" if prompt in WITH_TEXT else None
        questions.append(
            {"prompt_id": prompt, "question_id": f"{prompt}-q1", "text": "?", "text_target": target}
        )
    for name, rows in (("images", images), ("questions", questions)):
        (bundle / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return bundle


def _materialize(bundle: Path, resource: TextTranscriberResource, instance=None):
    transcribed_images = transcribed_images_asset(generation_assets())
    result = dg.materialize(
        [transcribed_images],
        partition_key="lens",
        resources={"text_transcriber": resource},
        run_config={"ops": {transcribed_images.op.name: {"config": {"bundle": str(bundle)}}}},
        instance=instance,
    )
    (event,) = result.get_asset_materialization_events()
    meta = {k: v.value for k, v in event.materialization.metadata.items()}
    rows = [json.loads(line) for line in (bundle / "transcriptions.jsonl").read_text().splitlines()]
    return meta, rows


def test_every_image_with_a_text_target_is_read_once_with_the_readers_identity(tmp_path, tiny_dir):
    bundle = _bundle(tmp_path)
    resource = TextTranscriberResource(profile="cpu", tiny_dir=str(tiny_dir), max_new_tokens=64)
    instance = dg.DagsterInstance.ephemeral()
    meta, rows = _materialize(bundle, resource, instance)
    assert sorted(r["prompt_id"] for r in rows) == sorted(WITH_TEXT)
    (run,) = instance.get_runs()
    logged = [entry.user_message for entry in instance.all_logs(run.run_id)]
    assert [m.split(" (")[0] for m in logged if " images read " in m] == [  # the run's counts
        f"lens: {n} of 2 images read" for n in (0, 1, 2)
    ]
    for row in rows:
        assert (row["status"], row["blocks"], row["reason"]) == ("ok", ["hello", "open"], None)
        assert row["ocr_model"] == "tiny-qwen3-vl" and row["ocr_revision"].startswith("local-")
        assert row["ocr_revision"] == meta["ocr_revision"]
    assert (meta["planned"], meta["transcribed"], meta["ok"]) == (2, 2, 2)
    assert meta["unavailable_truncated"] == meta["unavailable_unparseable"] == 0

    again, rows_again = _materialize(bundle, resource)
    assert (again["skipped"], again["transcribed"]) == (2, 0) and rows_again == rows


def test_a_reading_cut_at_the_token_limit_is_counted_unavailable_not_dropped(tmp_path, tiny_dir):
    bundle = _bundle(tmp_path)
    resource = TextTranscriberResource(profile="cpu", tiny_dir=str(tiny_dir), max_new_tokens=4)
    meta, rows = _materialize(bundle, resource)
    assert len(rows) == 2
    assert {(r["status"], r["reason"], tuple(r["blocks"])) for r in rows} == {
        ("unavailable", "truncated", ())
    }
    assert (meta["ok"], meta["unavailable_truncated"], meta["max_new_tokens"]) == (0, 2, 4)


class _NeverLoadedReader(TextTranscriberResource):
    def load(self):
        raise AssertionError("the reader was loaded for a bundle that must be refused first")


def test_a_symbolic_link_out_of_the_bundle_fails_the_ocr_asset_before_the_reader_loads(tmp_path):
    bundle = _bundle(tmp_path)
    secret = tmp_path.resolve() / "secret.png"
    secret.write_bytes(b"not the bundle's")
    (bundle / "images/lens/c002-en.png").unlink()
    (bundle / "images/lens/c002-en.png").symlink_to(secret)

    with pytest.raises(dg.Failure) as failed:
        _materialize(bundle, _NeverLoadedReader(profile="cpu"))

    assert failed.value.description == (
        f"bundle {bundle} refused (1 problems):\n"
        'images.jsonl:2: path "images/lens/c002-en.png" resolves outside the bundle folder '
        f'through a symbolic link, to "{secret}" (name its folder with --image-root DIR to '
        "allow it)"
    )
    assert not (bundle / "transcriptions.jsonl").exists()


class _RecordingReaderResource(TextTranscriberResource):
    def load(self):
        return RecordingReader()


def test_the_ocr_asset_takes_image_roots_as_the_import_does(tmp_path):
    bundle = _bundle(tmp_path)
    shared = tmp_path.resolve() / "shared"
    shared.mkdir()
    (bundle / "images/lens/c002-en.png").unlink()
    (bundle / "images/lens/c002-en.png").symlink_to(shared / "c002-en.png")
    transcribed_images = transcribed_images_asset(generation_assets())
    config = {"bundle": str(bundle), "image_roots": [str(shared)]}

    result = dg.materialize(
        [transcribed_images],
        partition_key="lens",
        resources={"text_transcriber": _RecordingReaderResource(profile="cpu")},
        run_config={"ops": {transcribed_images.op.name: {"config": config}}},
    )

    (event,) = result.get_asset_materialization_events()
    assert event.materialization.metadata["transcribed"].value == 2


QUESTIONS_JSON = json.dumps(
    {
        "questions": [
            {
                "id": "q1",
                "text": "Is there a cat?",
                "tag": "animals",
                "parents": [],
                "entity": "cat",
            },
            {"id": "q2", "text": "Is the cat red?", "tag": "color", "parents": ["q1"]},
        ]
    }
)


def _writer_dir(root: Path, answer: str) -> Path:
    """A resource tiny-model folder holding a tiny text LM that answers `answer`."""
    from ingestion.backends.tiny.models import build_tiny_text_lm

    build_tiny_text_lm(root / "text_lm")
    force_answer(root / "text_lm", answer)
    return root


def _prompts_bundle(tmp_path: Path) -> Path:
    bundle = tmp_path / "gpu_bundle"
    bundle.mkdir()
    prompts = [
        {"prompt_id": p, "concept_id": p[:4], "language": "en", "source": "t", "text": t}
        for p, t in (("c001-en", "a red cat"), ("c002-en", "a red cat"), ("c003-en", "a dog"))
    ]
    (bundle / "prompts.jsonl").write_text("".join(json.dumps(p) + "\n" for p in prompts))
    held = {"prompt_id": "c003-en", "question_id": "c003-en-q1", "text": "Is there a dog?",
            "capability": "animals", "parents": []}  # fmt: skip
    (bundle / "questions.jsonl").write_text(json.dumps(held) + "\n")
    return bundle


def _construct(bundle: Path, tiny: Path):
    result = dg.materialize(
        [constructed_questions],
        resources={"question_writer": QuestionWriterResource(profile="cpu", tiny_dir=str(tiny))},
        run_config={"ops": {constructed_questions.op.name: {"config": {"bundle": str(bundle)}}}},
    )
    (event,) = result.get_asset_materialization_events()
    return {k: v.value for k, v in event.materialization.metadata.items()}


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_question_construction_writes_validated_questions_for_prompts_without_any(
    tmp_path_factory, tmp_path
):
    tiny = _writer_dir(tmp_path_factory.mktemp("writer_ok"), QUESTIONS_JSON)
    bundle = _prompts_bundle(tmp_path)
    meta = _construct(bundle, tiny)
    assert (meta["planned"], meta["skipped"], meta["accepted"], meta["rejected"]) == (3, 1, 2, 0)
    rows = _jsonl(bundle / "questions.jsonl")
    written = {(r["question_id"], r["capability"], tuple(r["parents"])) for r in rows[1:]}
    assert written == {(f"{p}-q1", "animals", ()) for p in ("c001-en", "c002-en")} | {
        (f"{p}-q2", "color", (f"{p}-q1",)) for p in ("c001-en", "c002-en")
    }
    assert meta["questions"] == 4
    again = _construct(bundle, tiny)
    assert (again["skipped"], again["accepted"]) == (3, 0)


def test_a_prompt_whose_questions_break_the_rules_is_kept_with_its_reasons(
    tmp_path_factory, tmp_path
):
    bad = QUESTIONS_JSON.replace('"color"', '"colour_of_things"')  # not a capability
    tiny = _writer_dir(tmp_path_factory.mktemp("writer_bad"), bad)
    bundle = _prompts_bundle(tmp_path)
    meta = _construct(bundle, tiny)
    assert (meta["accepted"], meta["rejected"], meta["questions"]) == (0, 2, 0)
    rejections = _jsonl(bundle / "question_rejections.jsonl")
    assert sorted(r["prompt_id"] for r in rejections) == ["c001-en", "c002-en"]
    for r in rejections:
        assert any("colour_of_things" in reason for reason in r["reasons"])
        assert r["raw_text"] == bad
    assert sum(meta["rejection_reasons"].values()) == 2
    assert len(_jsonl(bundle / "questions.jsonl")) == 1  # only the question held before


def test_attribution_gives_each_question_the_tiny_models_key_and_caches_it(
    tmp_path_factory, tmp_path
):
    """Guards against the attribution asset not reaching the writer's model or its cache: on the
    cpu profile the tiny text LM attributes the bank's question (a taxonomy key, `model:` its
    name, the rule's label kept), and a second materialisation asks the model nothing."""
    from ingestion.backends.tiny.models import build_tiny_text_lm
    from ingestion.bundle import default_capabilities

    tiny = tmp_path_factory.mktemp("attributor")
    build_tiny_text_lm(tiny / "text_lm")
    bundle = _prompts_bundle(tmp_path)
    config = {"bundle": str(bundle), "cache": str(tmp_path / "cache.jsonl")}

    def attribute() -> dict:
        result = dg.materialize(
            [attributed_questions],
            resources={
                "question_writer": QuestionWriterResource(profile="cpu", tiny_dir=str(tiny))
            },
            run_config={"ops": {attributed_questions.op.name: {"config": config}}},
        )
        (event,) = result.get_asset_materialization_events()
        return {k: v.value for k, v in event.materialization.metadata.items()}

    meta = attribute()
    assert (meta["model"], meta["questions"], meta["asked"], meta["attributed"]) == (
        "tiny-text-lm", 1, 1, 1,
    )  # fmt: skip
    (row,) = _jsonl(bundle / "questions.jsonl")
    assert row["capability"] in default_capabilities()
    assert (row["capability_source"], row["rule_capability"]) == ("model:tiny-text-lm", "animals")
    again = attribute()
    assert (again["asked"], again["cached"], again["attributed"]) == (0, 1, 1)
    assert _jsonl(bundle / "questions.jsonl") == [row]
