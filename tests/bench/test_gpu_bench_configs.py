"""bench/gpu_bench.py --check-configs: the real architectures, counted on the meta device.

The whole check (12 configs, about 10 s of CPU here) runs once per module. The figures below are
quoted from the sources the configs cite, not computed by the code under test, so a config whose
values drift from its model shows up even if its own `expected` drifted with it.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench import gpu_bench

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("dagster", "pydantic", "duckdb", "dbt", "vllm")

# (row, component) -> parameters as the source states them
QUOTED = {
    # FLUX.1-dev model card: "a 12 billion parameter rectified flow transformer"
    ("flux1-dev", "transformer"): 12e9,
    # FLUX.1-dev text_encoder_2 shards: 4.99 GB + 4.53 GB in bf16
    ("flux1-dev", "text_encoder_2"): (4.99e9 + 4.53e9) / 2,
    # Qwen-Image model card: "a 20B MMDiT image foundation model"
    ("qwen-image", "transformer"): 20e9,
    # FLUX.2-dev model card: "a 32 billion parameter rectified flow transformer"
    ("flux2-dev", "transformer"): 32e9,
    # diffusers' ERNIE-Image page: "8B DiT backbone"
    ("ernie-image", "transformer"): 8e9,
    # Z-Image model card: "6B parameters"
    ("z-image-turbo", "transformer"): 6e9,
    # HiDream-I1 model card: "17B parameters"
    ("hidream-i1", "transformer"): 17e9,
    # GLM-Image: "a 7B diffusion decoder"
    ("glm-image", "transformer"): 7e9,
    # Qwen3 model cards: "Number of Parameters: 4.0B" / "8.2B"
    ("z-image-base", "text_encoder"): 4.0e9,
    ("flux2-klein-9b", "text_encoder"): 8.2e9,
    # Llama-3.1-8B-Instruct: 8B
    ("hidream-i1", "text_encoder_4"): 8e9,
}


@pytest.fixture(scope="module")
def checked():
    out = io.StringIO()
    status, counts = gpu_bench.check_configs(out=out)
    return status, {(c.row, c.component): c for c in counts}, out.getvalue()


def test_every_buildable_row_is_within_3_percent_of_its_sources(checked):
    status, counts, printed = checked
    assert status == 0, printed
    beyond = [key for key, c in counts.items() if not c.is_within]
    assert not beyond, printed


def test_every_count_names_a_source(checked):
    _, counts, _ = checked
    assert all(c.source.strip() for c in counts.values())
    for model_id in gpu_bench.arch_ids():
        arch = gpu_bench.load_arch(model_id)
        for name, spec in arch["components"].items():
            assert spec["config_source"].strip(), f"{model_id}/{name}"
            expected = spec["expected"]
            assert expected["source"].strip(), f"{model_id}/{name}"
            if expected["params"] is None:
                assert expected["source"].startswith(gpu_bench.UNVERIFIED), f"{model_id}/{name}"


@pytest.mark.parametrize(("key", "quoted"), sorted(QUOTED.items()))
def test_the_built_sizes_match_the_quoted_figures(checked, key, quoted):
    _, counts, _ = checked
    assert counts[key].actual == pytest.approx(quoted, rel=gpu_bench.TOLERANCE)


def test_every_registry_row_is_built_or_named_with_a_reason(checked):
    _, counts, printed = checked
    built = {row for row, _ in counts}
    for row in gpu_bench.registry_rows():
        model_id = row["model_id"]
        assert model_id in built or f"{model_id:15} not built: " in printed, model_id
    assert "hidream-o1" not in built and "lens" not in built


def test_every_registry_memory_floor_holds_the_rows_bf16_weights(checked):
    """min_gpu_gb (seeds/generators.csv) is never below two bytes a parameter of the built
    architecture: a floor below the weights would load a row that cannot fit without offload."""
    _, counts, _ = checked
    floors = {row["model_id"]: row["min_gpu_gb"] for row in gpu_bench.registry_rows()}
    totals = {row: c for (row, component), c in counts.items() if component == "TOTAL"}
    checked_rows = [row for row in totals if floors.get(row)]
    assert len(checked_rows) == 11  # every buildable registry row has a floor (ERNIE-Image too)
    below = {
        row: (floors[row], round(totals[row].whole * 2 / 1e9, 1))
        for row in checked_rows
        if float(floors[row]) < totals[row].whole * 2 / 1e9
    }
    assert not below, below


def _write_config(folder: Path, name: str, expected: dict, config: dict | None = None) -> None:
    vae = {
        "library": "diffusers",
        "class": "AutoencoderKL",
        "config": config if config is not None else {},  # the class defaults: a 1-block VAE
        "config_source": "test",
        "expected": expected,
    }
    doc = {"model_id": name, "pipeline_class": None, "components": {"vae": vae}}
    (folder / f"{name}.json").write_text(json.dumps(doc))


def test_a_count_beyond_3_percent_fails_the_check(tmp_path):
    _write_config(tmp_path, "off", {"params": 1000, "source": "a wrong figure"})
    status, counts = gpu_bench.check_configs(["off"], tmp_path, out=io.StringIO())
    assert status == 1
    assert [c.is_within for c in counts] == [False, False]  # the component and the row's total


def test_an_unverified_count_is_printed_but_never_fails(tmp_path):
    _write_config(tmp_path, "unsure", {"params": 1000, "source": "unverified: a guess"})
    out = io.StringIO()
    status, _ = gpu_bench.check_configs(["unsure"], tmp_path, out=out)
    assert status == 0
    assert "unverified: a guess" in out.getvalue()


def test_a_config_that_does_not_build_fails_the_check(tmp_path):
    expected = {"params": 1000, "source": "test"}
    _write_config(tmp_path, "broken", expected, config={"block_out_channels": "not a tuple"})
    out = io.StringIO()
    status, _ = gpu_bench.check_configs(["broken"], tmp_path, out=out)
    assert status == 1
    assert "broken          could not be built" in out.getvalue()


def test_a_config_cannot_name_another_library():
    with pytest.raises(ValueError, match="component library"):
        gpu_bench.component_class({"library": "os", "class": "system"})


def test_the_check_imports_no_project_or_warehouse_package():
    """The GPU machine carries diffusers only: the check must not reach Dagster, pydantic, DuckDB,
    dbt or vLLM, even through a project module (-X importtime lists every module imported)."""
    command = [sys.executable, "-X", "importtime", "-m", "bench.gpu_bench", "--check-configs"]
    command += ["--only", "flux2-klein-4b", "judge"]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    tops = {name.split(".")[0] for name in imported}
    assert {"torch", "diffusers", "transformers"} <= tops  # the listing is read right
    assert not tops & set(FORBIDDEN), sorted(tops & set(FORBIDDEN))
    assert not tops & {"ingestion", "dagster_defs", "reporting", "qct2i", "method"}
