"""tests/file_seconds.py reads a JUnit report into seconds per test file, and the checked-in
figures name files that exist (a renamed file would silently count a second a test)."""

import json
from pathlib import Path

from tests.file_seconds import FILE_SECONDS, main, seconds_by_file

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.marts.test_scoring" name="test_a" time="1.25" />
<testcase classname="tests.marts.test_scoring" name="test_b[x]" time="2.5" />
<testcase classname="tests.qct2i.test_evaluate.TestRefusals" name="test_c" time="0.75" />
<testcase classname="tests.test_docs" name="test_d" time="0.05" />
</testsuite></testsuites>
"""


def test_seconds_are_summed_per_file_test_classes_included(tmp_path):
    report = tmp_path / "report.xml"
    report.write_text(REPORT, encoding="utf-8")
    assert seconds_by_file(report) == {
        "tests/marts/test_scoring.py": 3.8,  # 1.25 + 2.5, to a tenth
        "tests/qct2i/test_evaluate.py": 0.8,
        "tests/test_docs.py": 0.1,
    }


def test_a_missing_report_is_refused_with_the_usage(tmp_path, capsys):
    assert main([str(tmp_path / "none.xml")]) == 2
    assert capsys.readouterr().out.startswith("usage: python -m tests.file_seconds REPORT.xml")


def test_every_measured_file_exists():
    root = Path(__file__).resolve().parents[1]
    measured = json.loads(FILE_SECONDS.read_text(encoding="utf-8"))
    assert [name for name in measured if not (root / name).is_file()] == []
