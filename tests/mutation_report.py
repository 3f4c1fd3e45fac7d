"""`python -m tests.mutation_report`: the mutation run's scores per module (`make mutation`), from
the results mutmut keeps beside its copy of the code (mutants/<path>.meta), written to
target/mutation/report.md and printed.

A mutant is one small change to one function (a flipped comparison, an operator, a constant);
the tests that cover the function run against it. Killed: a test failed (a timeout counts as
killed: the change made a test hang). Survived: every test passed, or no test covers it. Written
down as equivalent in tests/mutation_equivalents.md (a change no caller can observe, with the
reason): out of the score. The score is killed / (killed + survived) per module.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

MUTANTS = Path("mutants")
REPORT = Path("target/mutation/report.md")
EQUIVALENTS = Path(__file__).with_name("mutation_equivalents.md")
# mutmut's exit codes (mutmut.stats.status_by_exit_code), as this report groups them
KILLED = {1: "killed", 3: "killed"}
TIMEOUT = {36: "timeout", 24: "timeout", -24: "timeout", 152: "timeout", 255: "timeout"}
SURVIVED = {0: "survived", 5: "no tests", 33: "no tests"}
COLUMNS = ("mutants", "killed", "timeout", "survived", "no tests", "equivalent", "not run")
MUTANT_NAME = re.compile(r"`([\w.]+__mutmut_\d+)`")


def equivalent_names(path: Path = EQUIVALENTS) -> set[str]:
    """The mutants written down as equivalent: every `module.x_function__mutmut_N` in backticks."""
    return set(MUTANT_NAME.findall(path.read_text(encoding="utf-8"))) if path.exists() else set()


def status(exit_code: int | None) -> str:
    if exit_code is None:
        return "not run"  # the time limit ended the run first
    for statuses in (KILLED, TIMEOUT, SURVIVED):
        if exit_code in statuses:
            return statuses[exit_code]
    return "survived"  # suspicious, segfault, skipped: not shown killed


def counts_by_module(mutants: Path = MUTANTS, equivalents: set[str] | None = None) -> dict:
    """{module path: Counter of statuses} over every .meta file, and the surviving names."""
    equivalents = equivalent_names() if equivalents is None else equivalents
    counts, survivors = {}, []
    for meta in sorted(mutants.rglob("*.py.meta")):
        exit_codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
        if not exit_codes:
            continue
        module = str(meta.relative_to(mutants)).removesuffix(".meta")
        tally = Counter(mutants=len(exit_codes))
        for name, exit_code in exit_codes.items():
            verdict = "equivalent" if name in equivalents else status(exit_code)
            tally[verdict] += 1
            if verdict in ("survived", "no tests"):
                survivors.append(name)
        counts[module] = tally
    return {"modules": counts, "survivors": survivors}


def score(tally: Counter) -> str:
    caught = tally["killed"] + tally["timeout"]
    judged = caught + tally["survived"] + tally["no tests"]
    return f"{100 * caught / judged:.1f} %" if judged else "-"


def report_text(result: dict) -> str:
    header = ("module", *COLUMNS, "score")
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    total = Counter()
    for module, tally in result["modules"].items():
        total.update(tally)
        cells = (module, *(str(tally[c]) for c in COLUMNS), score(tally))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(
        "| **all** | " + " | ".join(str(total[c]) for c in COLUMNS) + f" | {score(total)} |"
    )
    survivors = result["survivors"]
    lines += ["", f"Survivors ({len(survivors)}; `.venv/bin/mutmut show NAME` shows one):", ""]
    lines += [f"- `{name}`" for name in survivors]
    return "\n".join(lines) + "\n"


def main() -> int:
    if not MUTANTS.exists():
        print("no mutants/: run `make mutation` first", file=sys.stderr)
        return 1
    text = report_text(counts_by_module())
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(text, encoding="utf-8")
    print(text.split("\n- ")[0].rstrip())  # the table and the survivors' count; the file names them
    print(f"written to {REPORT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
