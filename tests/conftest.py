"""pytest setup shared by every test: offline hub, no dbt telemetry."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "False")


@pytest.fixture(scope="session")
def tiny_sd(tmp_path_factory):
    from ingestion.backends.tiny import build_tiny_stable_diffusion

    return build_tiny_stable_diffusion(tmp_path_factory.mktemp("tiny") / "stable_diffusion")


@pytest.fixture(scope="session")
def tiny_vl(tmp_path_factory):
    from ingestion.backends.tiny import build_tiny_qwen3_vl

    return build_tiny_qwen3_vl(tmp_path_factory.mktemp("tiny") / "qwen3_vl")
