"""Light parts of the backends: no heavy imports, registry, cache keys, ids, seeds, parsing."""

from __future__ import annotations

import hashlib
import math
import subprocess
import sys
from pathlib import Path

import pytest

from ingestion.backends import GenerationRequest, cache_key, resolve
from ingestion.backends.api.generators import generator_model_ids, image_seed, load_generator_specs
from ingestion.backends.api.ids import UnsafeIdError, validate_id
from ingestion.backends.api.parsing import (
    p_yes_from_answer_scores,
    p_yes_from_logprobs,
    parse_blocks,
    parse_yes_no,
)
from ingestion.backends.drivers.image_store import ImageStore

ROOT = Path(__file__).resolve().parents[3]


def test_importing_ingestion_and_dagster_defs_pulls_in_no_ml_library():
    code = (
        "import ingestion, ingestion.backends, dagster_defs, dagster_defs.definitions, sys; "
        "heavy = [m for m in ('torch', 'diffusers', 'transformers', 'vllm') if m in sys.modules]; "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_registry_resolves_lazily_and_refuses_unknown_names():
    with pytest.raises(KeyError, match="no judge backend named 'nope'"):
        resolve("judge", "nope")
    writer = resolve("question_writer", "recorded")
    assert writer.__name__ == "RecordedQuestionWriter"


def _request(**changes):
    base = dict(
        prompt_id="p1",
        concept_id="c1",
        language="en",
        text="a red  cat",
        model_id="lens",
        seed=7,
        steps=4,
        guidance=1.0,
        width=32,
        height=32,
    )
    return GenerationRequest(**{**base, **changes})


def test_cache_key_ignores_whitespace_but_not_meaning():
    key = cache_key(_request(), "diffusers", "lens", "r1", 7)
    assert key == cache_key(_request(text=" a red cat "), "diffusers", "lens", "r1", 7)
    assert len(key) == 64
    others = {
        cache_key(_request(text="a blue cat"), "diffusers", "lens", "r1", 7),
        cache_key(_request(), "diffusers", "lens", "r2", 7),
        cache_key(_request(), "diffusers", "lens", "r1", 8),
        cache_key(_request(), "vllm", "lens", "r1", 7),
        cache_key(_request(steps=5), "diffusers", "lens", "r1", 7),
    }
    assert key not in others and len(others) == 5


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "..",
        ".",
        "a/b",
        "../x",
        "/etc/passwd",
        "a\x00b",
        "a\\b",
        "C:x",
        ".hidden",
        "-rf",
        "a..b",
        "x" * 129,
        "é",
        "a b",
        None,
        3,
    ],
)
def test_unsafe_ids_are_refused(bad, tmp_path):
    with pytest.raises(UnsafeIdError):
        validate_id(bad)
    with pytest.raises(UnsafeIdError):
        ImageStore(tmp_path).path("lens", bad, 1)


def test_safe_ids_map_inside_the_store(tmp_path):
    assert validate_id("c000123-zh_1.v2") == "c000123-zh_1.v2"
    path = ImageStore(tmp_path / "store").path("flux1-dev", "c1-en", 42)
    assert path == tmp_path / "store" / "flux1-dev" / "c1-en__s42.png"
    with pytest.raises(UnsafeIdError):
        ImageStore(tmp_path).path("lens", "c1", -1)


def test_seed_is_per_concept_and_generator():
    expected = int(hashlib.sha256(b"c0042|flux1-dev").hexdigest()[:8], 16) % 2**31
    assert image_seed("c0042", "flux1-dev") == expected
    assert image_seed("c0042", "flux1-dev") != image_seed("c0042", "lens")
    assert image_seed("c0042", "lens") != image_seed("c0043", "lens")


def test_generator_specs_follow_the_seed_file():
    ids = generator_model_ids()
    assert len(ids) == 13 and ids[0] == "ernie-image"
    turbo = load_generator_specs()["z-image-turbo"]
    assert (turbo.source, turbo.pipeline_class, turbo.steps, turbo.guidance) == (
        "Tongyi-MAI/Z-Image-Turbo",
        "ZImagePipeline",
        9,
        0.0,
    )
    assert (turbo.width, turbo.height, turbo.gpus) == (1024, 1024, 1)


def test_rows_checked_against_their_official_sources():
    """The rows issue 23 checked, as their sources give them (seeds/_seeds.yml cites each):
    LongCat-Image's README draws at guidance 4.0 (the diffusers default is 4.5); Lens's public
    weights are microsoft/Lens at 20 steps, CFG 5.0 (50 steps are Lens-Base's); HiDream-O1's
    inference.py runs the full model 50 steps at 5.0, 2048x2048; Z-Image's README names
    Tongyi-MAI/Z-Image."""
    specs = load_generator_specs()

    def row(model_id):
        s = specs[model_id]
        return (s.source, s.steps, s.guidance, s.width, s.height)

    assert row("longcat-image") == ("meituan-longcat/LongCat-Image", 50, 4.0, 1024, 1024)
    assert row("lens") == ("microsoft/Lens", 20, 5.0, 1024, 1024)
    assert row("hidream-o1") == ("HiDream-ai/HiDream-O1-Image", 50, 5.0, 2048, 2048)
    assert row("z-image-base") == ("Tongyi-MAI/Z-Image", 50, 4.0, 1024, 1024)


def test_an_extra_component_is_an_object_or_null(tmp_path):
    """null leaves an optional component out (ERNIE-Image's prompt enhancer); any other
    non-object is the registry's error, naming the file, line, column and argument."""
    from ingestion.backends.api.generators import GENERATORS_SEED, RegistryError

    ernie = load_generator_specs()["ernie-image"]
    assert ernie.extra_components == {"pe": None, "pe_tokenizer": None}
    lines = GENERATORS_SEED.read_text(encoding="utf-8").splitlines()
    assert lines[1].startswith("ernie-image,")
    lines[1] = lines[1].replace('""pe"":null', '""pe"":false')
    broken = tmp_path / "generators.csv"
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RegistryError) as error:
        load_generator_specs(broken, local=tmp_path / "none.csv")
    assert str(error.value).startswith(f"{broken}, line 2: column extra_components: 'pe' must")


@pytest.mark.parametrize(
    ("text", "answer"),
    [("yes", "yes"), (" Yes.", "yes"), ("no", "no"), ("NO!", "no"), ("是", "yes"), ("否", "no")],
)
def test_yes_no_answers_parse(text, answer):
    assert parse_yes_no(text) == (answer, None)


@pytest.mark.parametrize("text", ["maybe", "", "yes no", "nope", "<|im_end|>"])
def test_other_outputs_are_missing_with_a_reason_never_no(text):
    answer, reason = parse_yes_no(text)
    assert answer is None and reason


def test_p_yes_is_the_two_way_softmax():
    assert p_yes_from_answer_scores([2.0], [0.0]) == pytest.approx(math.e**2 / (math.e**2 + 1))
    assert p_yes_from_answer_scores([1000.0], [1000.0]) == pytest.approx(0.5)
    lp = {"yes": math.log(0.6), "no": math.log(0.2), "maybe": math.log(0.2)}
    assert p_yes_from_logprobs(lp) == pytest.approx(0.75)
    assert p_yes_from_logprobs({"maybe": -0.1}) is None


@pytest.mark.parametrize(
    ("raw", "blocks"),
    [
        ('{"blocks": ["OPEN", " 你好 "]}', ("OPEN", "你好")),
        ('["EXIT"]', ("EXIT",)),
        ('```json\n{"blocks": []}\n```', ()),
    ],
)
def test_blocks_parse(raw, blocks):
    assert parse_blocks(raw) == (blocks, None)


@pytest.mark.parametrize("raw", ['{"blocks": ["a"', '{"text": "a"}', '{"blocks": [1]}', "OPEN"])
def test_unparseable_blocks_give_a_reason(raw):
    blocks, reason = parse_blocks(raw)
    assert blocks is None and reason
