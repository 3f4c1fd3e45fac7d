"""The OCR transcriber (Eq. 3's evidence) on a tiny Qwen3-VL whose answer is forced.

The tiny model's weights are random, so its answer is forced through its saved generation config
(forced_answers.py); the real loader reads it and the real `generate` applies it, so the
transcriber runs end to end: a complete block list is `ok` with exactly its blocks; cut at
max_new_tokens it is `unavailable: truncated`; a complete answer that is not a block list is
`unparseable`.
"""

from __future__ import annotations

import json

import pytest
from PIL import Image

from ingestion.backends.api.interfaces import TranscriptionRequest
from ingestion.backends.api.parsing import read_transcription
from ingestion.backends.models.transformers_vl import OCR_INSTRUCTION, TransformersTranscriber
from ingestion.backends.tiny.models import build_tiny_qwen3_vl

from .forced_answers import ASSISTANT_OPENING, force_answer

# Long text: 40 blocks, several hundred tokens, more than the old fixed 256 new tokens.
LONG_BLOCKS = tuple(f"hello {i} open the red sign" for i in range(40))


@pytest.fixture
def image(tmp_path):
    path = tmp_path / "image.png"
    Image.new("RGB", (32, 32), (20, 200, 10)).save(path)
    return str(path)


def _forced_transcriber(folder, image: str, answer: str, max_new_tokens: int):
    """A tiny Qwen3-VL saved in `folder` whose greedy answer to the OCR prompt is `answer`."""
    build_tiny_qwen3_vl(folder)
    n_tokens = force_answer(folder, answer)
    transcriber = TransformersTranscriber(
        str(folder), model_name="tiny-ocr", device="cpu", max_new_tokens=max_new_tokens
    )
    prompt = transcriber.vl.inputs(image, [OCR_INSTRUCTION])["input_ids"][0].tolist()
    opening = transcriber.vl.tokenizer.encode(ASSISTANT_OPENING, add_special_tokens=False)
    assert prompt[-len(opening) :] == opening  # the bias is anchored where the answer starts
    return transcriber, n_tokens


def test_a_long_block_list_is_ok_with_exactly_its_blocks(tmp_path, image):
    answer = json.dumps({"blocks": list(LONG_BLOCKS)})
    transcriber, n_tokens = _forced_transcriber(tmp_path / "m", image, answer, 1024)
    assert n_tokens > 256
    result = transcriber.transcribe(TranscriptionRequest("p1", "lens", image))
    assert (result.status, result.reason) == ("ok", None)
    assert result.blocks == LONG_BLOCKS
    assert result.raw_text == answer
    assert (result.prompt_id, result.model_id) == ("p1", "lens")
    assert result.ocr_model == "tiny-ocr" and result.ocr_revision.startswith("local-")


def test_the_same_answer_cut_at_the_token_limit_is_unavailable_truncated(tmp_path, image):
    answer = json.dumps({"blocks": list(LONG_BLOCKS)})
    transcriber, _ = _forced_transcriber(tmp_path / "m", image, answer, 100)
    result = transcriber.transcribe(TranscriptionRequest("p1", "lens", image))
    assert (result.status, result.reason, result.blocks) == ("unavailable", "truncated", ())
    assert answer.startswith(result.raw_text) and len(result.raw_text) < len(answer)


def test_an_answer_that_ends_but_is_not_a_block_list_is_unparseable(tmp_path, image):
    transcriber, _ = _forced_transcriber(tmp_path / "m", image, '{"text": "open"}', 64)
    result = transcriber.transcribe(TranscriptionRequest("p1", "lens", image))
    assert result.status == "unavailable" and result.blocks == ()
    assert result.reason == "unparseable: JSON object without 'blocks'"


@pytest.mark.parametrize(
    ("raw", "finished", "expected"),
    [
        ('{"blocks": ["OPEN"]}', True, (("OPEN",), None)),
        ('{"blocks": ["OPEN"]}', False, (None, "truncated")),  # parses, but was cut
        ('{"blocks": ["OP', False, (None, "truncated")),
        (
            '{"blocks": ["OP',
            True,
            (None, "unparseable: not JSON at char 12: Unterminated string starting at"),
        ),
    ],
)
def test_read_transcription(raw, finished, expected):
    assert read_transcription(raw, finished) == expected
