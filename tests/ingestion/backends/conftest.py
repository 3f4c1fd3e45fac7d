import pytest


@pytest.fixture(scope="session")
def tiny_sd(tmp_path_factory):
    from ingestion.backends.tiny import build_tiny_stable_diffusion

    return build_tiny_stable_diffusion(tmp_path_factory.mktemp("tiny") / "stable_diffusion")


@pytest.fixture(scope="session")
def tiny_vl(tmp_path_factory):
    from ingestion.backends.tiny import build_tiny_qwen3_vl

    return build_tiny_qwen3_vl(tmp_path_factory.mktemp("tiny") / "qwen3_vl")
