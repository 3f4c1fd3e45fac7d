"""Fixtures of the console-script tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import copy_warehouse
from tests.ingestion.backends.forced_answers import force_answer, force_judge_answer

OCR_ANSWER = '{"blocks": ["x"]}'  # the tiny OCR reader's one answer: a reading ends at once


@pytest.fixture
def published(hand_published, tmp_path) -> Path:
    """A copy of the session's published hand warehouse (with transcriptions), to write into."""
    return copy_warehouse(hand_published, tmp_path)


@pytest.fixture(scope="session")
def tiny_models(tiny_vl, tmp_path_factory) -> Path:
    """QCT2I_TINY_MODELS for the cpu profile of `qct2i evaluate` (test_evaluate*.py): the tiny
    Qwen3-VL as judge and OCR reader, judging every question "yes" and reading OCR_ANSWER. The
    judge's answer is forced too: with the OCR answer alone its first token is the reading's,
    so every judgment would be missing, and a generator with no answered question has no
    estimate (METHOD 6 and 16: missing is never "no"). Tests only read it."""
    root = tmp_path_factory.mktemp("tiny-models")
    shutil.copytree(tiny_vl, root / "qwen3_vl")
    force_judge_answer(root / "qwen3_vl", "yes")
    force_answer(root / "qwen3_vl", OCR_ANSWER)
    return root
