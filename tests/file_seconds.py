"""`python -m tests.file_seconds REPORT.xml`: rewrite tests/file_seconds.json, each test file's
seconds (setup, call and teardown of its tests) from a JUnit report of a whole run (`make test`
writes one to target/test-results.xml).

Under pytest-xdist the workers take whole files, longest first by these figures
(tests/conftest.py): a file run last then ends near the other worker's last file. A file that is
not listed counts a second a test until the next rewrite.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

FILE_SECONDS = Path(__file__).with_name("file_seconds.json")


def seconds_by_file(report: Path) -> dict[str, float]:
    """{tests/...py: seconds} over every testcase of the report (its `classname` is the module
    path with dots, e.g. tests.marts.test_scoring or tests.marts.test_scoring.TestSomething)."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ElementTree.parse(report).iter("testcase"):
        module = case.get("classname", "").split(".")
        while module and not module[-1].startswith("test_"):
            module.pop()  # a test class's name
        if module:
            seconds["/".join(module) + ".py"] += float(case.get("time", 0))
    return {name: round(value, 1) for name, value in sorted(seconds.items())}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_file():
        print("usage: python -m tests.file_seconds REPORT.xml (a JUnit report of a whole run)")
        return 2
    figures = seconds_by_file(Path(argv[0]))
    FILE_SECONDS.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    print(f"{FILE_SECONDS}: {len(figures)} files, {sum(figures.values()):.0f} s in all")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
