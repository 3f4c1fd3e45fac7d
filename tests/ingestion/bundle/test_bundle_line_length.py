"""The line-length limit of a JSONL file (issue 12): a 100 MB line is refused by its length, in
memory bounded by a few times the file, through `read_bundle` and the console script; a line just
under the 16 MiB limit loads.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ingestion.bundle import read_bundle
from tests.helpers import run_cli
from tests.worlds.good_bundle import TAXONOMY, good, write

PROJECT_ROOT = Path(__file__).resolve().parents[3]


# ------------------------------------------------------------------------------------------------
# A 100 MB line: refused by its length, in memory bounded by a few times the file
# ------------------------------------------------------------------------------------------------

_READ_AND_MEASURE = """
import resource, sys
from pathlib import Path
from ingestion.bundle import BundleError, read_bundle
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    read_bundle(Path(sys.argv[1]), {"animals", "color", "spatial", "text_rendering", "style"})
    print("accepted")
except BundleError as refused:
    print("\\n".join(str(p) for p in refused.problems))
print("peak_rss_growth_kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


ROW_START = b'{"prompt_id": "p1", "model_id": "m1", "question_id": "q1", "answer": "'


@pytest.mark.e2e
@pytest.mark.parametrize("well_formed", [True, False], ids=["row", "garbage"])
def test_a_100_mb_line_is_refused_by_its_length_in_bounded_memory(tmp_path, well_formed):
    size = 100 << 20
    folder = write(tmp_path / "big", good())
    with (folder / "judgments.jsonl").open("ab") as out:
        if well_formed:  # a row whose answer is 100 MB long
            out.write(ROW_START + b"y" * size + b'"}\n')
        else:  # 100 MB of garbage without a line end
            out.write(b"x" * size)
    line_bytes = len(ROW_START) + size + 2 if well_formed else size
    try:
        child = subprocess.run(
            [sys.executable, "-c", _READ_AND_MEASURE, str(folder)],
            capture_output=True,
            text=True,
            cwd=PROJECT_ROOT,
            timeout=300,
        )
        refused = run_cli(["import", str(folder)], tmp_path / "w.duckdb")
    finally:
        (folder / "judgments.jsonl").unlink()

    assert child.returncode == 0, child.stderr
    problems, growth = child.stdout.strip().splitlines()[:-1], child.stdout.split()[-1]
    assert problems == [
        f"judgments.jsonl:10: line is {line_bytes:,} bytes long; the limit is 16 MiB"
    ]
    assert int(growth) * 1024 < 4 * size  # the file is held about twice, never parsed
    assert refused.returncode == 2 and "judgments.jsonl:10: line is" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_line_just_under_16_mib_loads(tmp_path):
    tables = good()
    tables["prompts"][2]["text"] = "x" * ((16 << 20) - 200)

    prompts = read_bundle(write(tmp_path, tables), TAXONOMY)["prompts"]

    assert len(prompts["text"][2].as_py()) == (16 << 20) - 200
