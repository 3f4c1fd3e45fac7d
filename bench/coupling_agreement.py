"""Linearised vs exact coupling intervals on the paper-scale bench warehouse (about 20 min).

`auto` (the default of `structure_coupling_bootstrap`) takes the linearised bootstrap for a
world this large; this script measures what that costs in accuracy: it bootstraps the bench
warehouse's question pairs and native outcomes (built by `make bench`) with both methods, same
draws and seed, and reports the linearised/exact width ratio and the largest endpoint shift as
a share of the exact width, over every language x model (and macro) x effect.

    make bench && python -m bench.coupling_agreement
"""

from __future__ import annotations

import json
import time

import numpy as np

from bench.coupling_coverage import coupling_inputs
from ingestion.paths import PROJECT_ROOT
from method.structure import coupling_bootstrap

BENCH_DIR = PROJECT_ROOT / "bench"
DRAWS, SEED = 1000, 20260829


def agreement(linearised: list[dict], exact: list[dict]) -> dict:
    """Width ratios and endpoint shifts (in exact widths) of matching intervals."""

    def keyed(rows):
        return {(r["language"], r["model_id"], r["effect"]): r for r in rows}

    lin, exa = keyed(linearised), keyed(exact)
    if lin.keys() != exa.keys():
        raise ValueError("the two methods returned different intervals")
    ratio, shift = [], []
    for key, e in exa.items():
        width = e["ci_hi"] - e["ci_lo"]
        ratio.append((lin[key]["ci_hi"] - lin[key]["ci_lo"]) / width)
        shift.append(
            max(abs(lin[key]["ci_lo"] - e["ci_lo"]), abs(lin[key]["ci_hi"] - e["ci_hi"])) / width
        )
    ratio, shift = np.array(ratio), np.array(shift)
    return {
        "intervals": len(ratio),
        "width_ratio_mean": round(float(ratio.mean()), 4),
        "width_ratio_min": round(float(ratio.min()), 4),
        "width_ratio_max": round(float(ratio.max()), 4),
        "endpoint_shift_mean": round(float(shift.mean()), 4),
        "endpoint_shift_max": round(float(shift.max()), 4),
    }


def main() -> None:
    pairs, records = coupling_inputs(BENCH_DIR / "work" / "bench.duckdb")
    rows, seconds = {}, {}
    for method in ("linearised", "exact"):
        start = time.perf_counter()
        rows[method] = coupling_bootstrap(pairs, records, draws=DRAWS, seed=SEED, method=method)
        seconds[method] = round(time.perf_counter() - start, 1)
    result = {
        "draws": DRAWS,
        "bootstrap_seconds": seconds,
        **agreement(rows["linearised"], rows["exact"]),
    }
    (BENCH_DIR / "coupling_agreement.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
