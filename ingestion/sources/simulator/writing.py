"""Writing: the bundle's tables (the judgments column-wise, the rest through `write_bundle`)
and the planted truth of `planted.json`."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ingestion.bundle.format import BUNDLE_FORMATS, TABLES, write_bundle
from ingestion.sources.simulator.calibration import LANGUAGES, capability_offsets
from ingestion.sources.simulator.outcomes import LATENCY_LOG_SIGMA, OCR_SPURIOUS_BLOCK_RATE
from ingestion.sources.simulator.vocabulary import _SPURIOUS, TEXT_CAPABILITY
from ingestion.sources.simulator.world import SOURCES
from method.taxonomy import Taxonomy

_SAFE_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")


def _write_judgments(path_base: Path, fmt: str, cols: dict[str, np.ndarray]) -> Path:
    """Judgments are most of the bundle: write them column-wise rather than dict by dict.

    The JSONL lines hold the contract's first five columns as `write_bundle` writes them (same keys,
    order and JSON values) and leave out the optional judge columns; ids are checked to need no
    escaping. Parquet goes through pyarrow with the contract's types.
    """
    spec = TABLES["judgments"]
    path = path_base / f"judgments.{fmt}"
    answer = cols["answer"]  # object array of 'yes' / 'no' / None
    p_yes = cols["p_yes"]  # float array, NaN where missing
    if fmt == "parquet":
        columns = {
            "prompt_id": pa.array(cols["prompt_id"], pa.string()),
            "model_id": pa.array(cols["model_id"], pa.string()),
            "question_id": pa.array(cols["question_id"], pa.string()),
            "answer": pa.array(answer, pa.string()),
            "p_yes": pa.array(p_yes, pa.float64(), mask=np.isnan(p_yes)),
        }
        # the contract's types for the columns written; the optional judge columns are left out
        table = pa.table(columns, schema=pa.schema([spec.schema.field(c) for c in columns]))
        pq.write_table(table, path)
        return path
    for name in ("prompt_id", "model_id", "question_id"):
        if not all(_SAFE_ID.match(v) for v in set(cols[name])):
            raise ValueError(f"judgment {name} values need JSON escaping")
    with path.open("w", encoding="utf-8") as out:
        chunk = 200_000
        for start in range(0, len(answer), chunk):
            stop = start + chunk
            lines = [
                f'{{"prompt_id": "{p}", "model_id": "{m}", "question_id": "{q}", '
                + (
                    f'"answer": "{a}", "p_yes": {v!r}}}\n'
                    if a is not None
                    else '"answer": null, "p_yes": null}\n'
                )
                for p, m, q, a, v in zip(
                    cols["prompt_id"][start:stop],
                    cols["model_id"][start:stop],
                    cols["question_id"][start:stop],
                    answer[start:stop],
                    p_yes[start:stop].tolist(),
                    strict=True,
                )
            ]
            out.write("".join(lines))
    return path


def _planted(
    taxonomy: Taxonomy,
    model_ids: Sequence[str],
    rates: Mapping[tuple[str, str, str], float],
    generators: Mapping[str, Mapping[str, str]],
    ocr_unavailable: Mapping[str, float],
    shape_mix: float,
) -> dict:
    """Everything a test needs to compare the marts with the truth. `capability_offsets` are the
    calibration's d_mt per generator (overridden `rates` may depart from them)."""
    by_model: dict = {}
    for m in model_ids:
        by_model[m] = {}
        for lang in LANGUAGES:
            caps = {t: rates[m, lang, t] for t in taxonomy.capabilities}
            groups = {
                g: float(np.mean([caps[t] for t in taxonomy.members(g)])) for g in taxonomy.groups
            }
            by_model[m][lang] = {
                "capabilities": caps,
                "groups": groups,
                "hcq_total": float(np.mean(list(groups.values()))),
            }
    return {
        "capability_offsets": {m: capability_offsets(taxonomy, m, shape_mix) for m in model_ids},
        "rates": by_model,
        "text_char_accuracy": {
            m: {lang: rates[m, lang, TEXT_CAPABILITY] for lang in LANGUAGES}
            for m in model_ids
            if (m, LANGUAGES[0], TEXT_CAPABILITY) in rates
        },
        "ocr": {
            "unavailable_rate": dict(ocr_unavailable),
            "spurious_block_rate": OCR_SPURIOUS_BLOCK_RATE,
            "spurious_block_chars": _SPURIOUS,
            "block_order": "shuffled",
        },
        "cost": {
            m: {
                "cost_gpu_s_per_mp": float(generators[m]["cost_gpu_s_per_mp"]),
                "width": int(generators[m]["width"]),
                "height": int(generators[m]["height"]),
                "gpus": int(generators[m]["gpus"]),
                "latency_log_sigma": LATENCY_LOG_SIGMA,
            }
            for m in model_ids
        },
        "sources": {s.name: s.weight for s in SOURCES},
        "p_yes": "yes: uniform(0.5, 1); no: uniform(0, 0.5); rounded to 4 decimals",
    }


def _write_tables(
    out_dir: Path,
    fmt: str,
    small: Mapping[str, list[dict]],
    judgments: Mapping[str, Sequence[np.ndarray]],
) -> tuple[dict[str, Path], dict[str, int]]:
    """Every table's file (the judgments from their per-generator-and-language column chunks),
    replacing any table an earlier run left in either format; paths and row counts in table
    order."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, other in itertools.product(TABLES, BUNDLE_FORMATS):
        (out_dir / f"{name}.{other}").unlink(missing_ok=True)  # no stale table of an old run
    paths = {path.stem: path for path in write_bundle(out_dir, small, fmt)}
    judgment_cols = {k: np.concatenate(v) for k, v in judgments.items()}
    paths["judgments"] = _write_judgments(out_dir, fmt, judgment_cols)
    row_counts = {name: len(rows) for name, rows in small.items()}
    row_counts["judgments"] = len(judgment_cols["answer"])
    return (
        {k: paths[k] for k in TABLES if k in paths},
        {k: row_counts[k] for k in TABLES if k in row_counts},
    )


def _write_planted(out_dir: Path, planted: Mapping) -> Path:
    path = out_dir / "planted.json"
    path.write_text(json.dumps(planted, indent=1, ensure_ascii=False), encoding="utf-8")
    return path
