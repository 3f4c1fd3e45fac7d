"""`python -m tests.mutation_fast_selection SECONDS [FOLDER]`: the `PYTEST_ADDOPTS` that leave
the slow tests out of a mutmut run (docs/testing.md, "Mutation testing"): a `--deselect` for
every test under FOLDER (default tests/ingestion/bundle) that took SECONDS or more in mutmut's
statistics (mutants/mutmut-stats.json). Set through the environment, not `[tool.mutmut]`, whose
pytest arguments are in mutmut's fingerprint: changing them resets every verdict.

    export PYTEST_ADDOPTS="$(.venv/bin/python -m tests.mutation_fast_selection 0.3)"
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

STATS = Path("mutants/mutmut-stats.json")


def slow_tests(seconds: float, folder: str, stats: Path = STATS) -> list[str]:
    durations = json.loads(stats.read_text(encoding="utf-8"))["duration_by_test"]
    return sorted(t for t, s in durations.items() if t.startswith(folder) and s >= seconds)


def addopts(tests: list[str]) -> str:
    return " ".join(f"--deselect {shlex.quote(test)}" for test in tests)


if __name__ == "__main__":
    folder = sys.argv[2] if len(sys.argv) > 2 else "tests/ingestion/bundle"
    print(addopts(slow_tests(float(sys.argv[1]), folder)))
