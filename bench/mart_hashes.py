"""Fingerprint every mart of two reference worlds, to prove a refactor leaves the numbers alone.

`python -m bench.mart_hashes --out FILE` builds the demo world (the simulator's default scale and
seed) and the hand-built bundle of the scoring tests through the real loader and a real `dbt
build`, then writes, per mart, its row count, its columns and one MD5 over its rows. A row is
rendered as text with its columns in name order and the rows are sorted by that text, so the
fingerprint depends on content only, not on the order rows were written in. Floats render in
DuckDB's shortest round-trip form, so any change in any bit of any value changes the hash.
The builds use the project's profile, which runs DuckDB on one thread: only that makes a build
bit-reproducible (profiles.yml says why).

`python -m bench.mart_hashes --compare A B` prints the marts whose fingerprints differ and exits
1 when any does.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from ingestion.bundle import load_bundle
from ingestion.sources.simulator import DEMO_CONCEPTS, SimulationConfig, simulate
from qct2i.dbt_runner import run_dbt
from reporting.fingerprints import mart_fingerprints


def build_world(name: str, root: Path) -> Path:
    """Bundle -> real import -> real `dbt build`; returns the warehouse."""
    bundle = root / name / "bundle"
    if name == "demo":
        simulate(bundle, SimulationConfig(concepts=DEMO_CONCEPTS, seed=0))
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from tests.worlds.hand import write_hand_bundle

        write_hand_bundle(bundle)
    warehouse = root / name / "warehouse.duckdb"
    load_bundle(bundle, warehouse)
    run_dbt("build", warehouse, target_path=root / name / "target")
    return warehouse


def compare(a: dict, b: dict) -> list[str]:
    problems = []
    for world in sorted(set(a) | set(b)):
        left, right = a.get(world, {}), b.get(world, {})
        for mart in sorted(set(left) | set(right)):
            if left.get(mart) != right.get(mart):
                problems.append(f"{world}/{mart}: {left.get(mart)} != {right.get(mart)}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("bench/mart_hashes.json"))
    parser.add_argument("--worlds", nargs="+", default=["hand", "demo"])
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = parser.parse_args(argv)
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        problems = compare(a, b)
        print("\n".join(problems) or "every mart identical")
        return 1 if problems else 0
    result = {}
    with tempfile.TemporaryDirectory(prefix="qct2i-hashes-") as tmp:
        for world in args.worlds:
            result[world] = mart_fingerprints(build_world(world, Path(tmp)))
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"{sum(len(w) for w in result.values())} marts fingerprinted -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
