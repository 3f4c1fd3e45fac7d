"""Measured costs from a GPU bench run (`bench/gpu_bench.py`'s `gpu_bench.json`, issue 23) as
`generators` rows: `cost_source = measured`, with the GPU model, the date and the library
versions they were measured with. `qct2i calibrate FILE` writes them into the working copy.

A file is refused whole, with every problem named (`BundleError`), when it cannot be costs: a dry
run (its figures are tiny models on a CPU, not costs), no GPU model, no date, or no row with a
usable figure. Otherwise its rows that are `ok` with a positive, finite `gpu_s_per_mp` are taken,
and every other row is skipped and named with why: those that did not finish (`timeout`,
`error: ...`, `not built: ...`), those the bench failed (`failed: inconsistent ...`), an `ok`
row without a usable figure (a file from before the bench checked its rows), and a row timed at a
batch of more than one image a call (`--batch`: a memory figure; its time per image is not the
one-image cost the others are). One noisy row on a device must not throw away every figure the
run measured (issue 35).
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass
from pathlib import Path

from ingestion.bundle.problems import BundleError, Problem
from ingestion.paths import SEEDS_DIR


@dataclass(frozen=True)
class BenchCosts:
    gpu_model: str
    measured_at: str
    rows: list[dict]  # generators rows, one per generator with a measured cost
    skipped: list[tuple[str, str]]  # (model_id, status) of the rows without a figure


def read_bench_costs(path: Path, registry: Path = SEEDS_DIR / "generators.csv") -> BenchCosts:
    """The measured costs of one bench JSON, or BundleError naming what is wrong with it."""
    path = Path(path)
    document = _read_json(path)
    problems = _document_problems(path, document)
    gpu_model = _gpu_model(document)
    if gpu_model is None:
        problems.append(Problem(path.name, None, "names no GPU model (device.device_name)"))
    records = document.get("generators") if isinstance(document, dict) else None
    if not isinstance(records, list):
        problems.append(Problem(path.name, None, "has no `generators` list"))
        records = []
    registered = _registry(registry)
    rows, skipped = [], []
    for index, record in enumerate(records):
        where = f"generators[{index}]"
        model_id = record.get("model_id") if isinstance(record, dict) else None
        if not isinstance(model_id, str) or not model_id:
            problems.append(Problem(path.name, None, f"{where}: no model_id"))
            continue
        if record.get("status") != "ok":
            skipped.append((model_id, str(record.get("status"))))
            continue
        figure = record.get("gpu_s_per_mp")
        if not _is_positive_number(figure):
            reason = f"{where}: status ok but gpu_s_per_mp is {figure!r}, not a positive number"
            skipped.append((model_id, reason))
            continue
        if (batch := record.get("batch", 1)) != 1:
            # a batch shares a call's time among its images: another figure than the registry's
            # and the paper's one image a call, which the router compares it with
            reason = f"{where}: measured at batch {batch!r}; a cost is one image a call"
            skipped.append((model_id, reason))
            continue
        rows.append(_generator_row(model_id, figure, document, gpu_model, registered))
    if not rows and not problems:
        problems.append(Problem(path.name, None, "no generator row with a measured cost"))
    if problems:
        raise BundleError(path, problems)
    return BenchCosts(gpu_model, document["date"], rows, skipped)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BundleError(path, [Problem(path.name, None, f"cannot be read: {error}")]) from None
    except json.JSONDecodeError as error:
        reason = f"not JSON ({error.msg}, column {error.colno})"
        raise BundleError(path, [Problem(path.name, error.lineno, reason)]) from None


def _document_problems(path: Path, document) -> list[Problem]:
    if not isinstance(document, dict):
        return [Problem(path.name, None, "is not a JSON object (a gpu_bench.json)")]
    problems = []
    if document.get("mode") != "gpu":
        mode = document.get("mode")
        reason = f"mode is {mode!r}, not 'gpu': a dry run's figures are tiny models on a CPU"
        problems.append(Problem(path.name, None, reason))
    if not isinstance(document.get("date"), str):
        problems.append(Problem(path.name, None, "has no `date` (when it was measured)"))
    return problems


def _gpu_model(document) -> str | None:
    """The GPU the run measured on: torch's device name, else nvidia-smi's first GPU."""
    if not isinstance(document, dict):
        return None
    device = document.get("device") if isinstance(document.get("device"), dict) else {}
    gpus = document.get("gpu") if isinstance(document.get("gpu"), list) else []
    named = [device.get("device_name")] + [g.get("name") for g in gpus if isinstance(g, dict)]
    return next((name for name in named if isinstance(name, str) and name), None)


def _is_positive_number(value) -> bool:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return is_number and math.isfinite(value) and value > 0


def _registry(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return {row["model_id"]: row for row in csv.DictReader(handle)}


def _generator_row(model_id, figure, document, gpu_model, registered) -> dict:
    """The generators row (ingestion.bundle.format): the registry's name and hub id for a row
    the registry knows, the model id otherwise."""
    known = registered.get(model_id, {})
    return {
        "model_id": model_id,
        "display_name": known.get("display_name") or model_id,
        "cost_gpu_s_per_mp": float(figure),
        "hub_id": known.get("hub_repo_id") or None,
        "revision": None,
        "pipeline_class": known.get("pipeline_class") or None,
        "cost_source": "measured",
        "cost_gpu_model": gpu_model,
        "cost_measured_at": document["date"],
        "cost_versions": json.dumps(document.get("versions") or {}, sort_keys=True),
    }
