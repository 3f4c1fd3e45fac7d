"""The report's "where each generator fails" section (issue 24) in headless Chromium: its chart
holds the mart's worst capabilities, and evidence text that looks like markup (a prompt, a
question, an image path) is shown as text: nothing runs, loads or is embedded.

The hostile text goes into a copy of the hand warehouse's fct_failure_examples rows (the report
reads that mart; dbt passes the bundle's text through unchanged, so this is what a bundle with
such text would give, without another build)."""

from __future__ import annotations

import duckdb
import pytest

from reporting.html_report import write_report
from tests.helpers import copy_warehouse, query
from tests.reporting.conftest import visit_offline

pytestmark = pytest.mark.e2e  # a published warehouse, read in headless Chromium

HOSTILE = {
    "prompt_text": '<script>window.pwned = 1</script>a "dog" & <b>cat</b>',
    "question_text": '<img src=x onerror="window.pwned = 2">Is it red?',
    "image_path": 'images/m1/"><iframe src="https://example.com/"></iframe>.png',
}


@pytest.fixture
def hostile_report(hand_published, tmp_path):
    warehouse = copy_warehouse(hand_published, tmp_path)
    with duckdb.connect(str(warehouse)) as con:
        con.execute(
            "update marts.fct_failure_examples set prompt_text = ?, question_text = ?, "
            "image_path = ?",
            list(HOSTILE.values()),
        )
    return warehouse, write_report(warehouse, tmp_path / "report.html")


def test_hostile_evidence_text_is_shown_as_text(hostile_report, chromium, tmp_path):
    warehouse, report = hostile_report
    visit = visit_offline(chromium, report, tmp_path / "report.png")
    assert visit.requests == [] and visit.errors == []
    assert visit.active == [], f"evidence became markup: {visit.active}"
    rows = visit.cells["failure-examples"]
    # the chart's pairs (deficit < 0, among each generator's 3 worst, pooled) that have examples
    expected = query(
        warehouse,
        "select count(*) from marts.fct_failure_examples e join marts.fct_capability_deficits d "
        "using (model_id, capability) where d.language_scope = 'pooled' and d.deficit < 0 "
        "and d.deficit_rank <= 3",
    )[0][0]
    assert len(rows) == expected > 0
    for row in rows:
        assert row[3:5] == [HOSTILE["prompt_text"], HOSTILE["question_text"]]
        assert row[6] == HOSTILE["image_path"]


def test_the_chart_shows_each_generators_worst_capabilities(hand_published, chromium, tmp_path):
    report = write_report(copy_warehouse(hand_published, tmp_path), tmp_path / "report.html")
    visit = visit_offline(chromium, report, tmp_path / "report.png")
    chart = visit.charts["capability-deficits"]
    # by hand (tests/marts/test_failures.py): pooled, m1 color -50; m2 text_rendering -65 and
    # man_made -50 (m2's other pooled deficits are 0: not below the field)
    labels = [t for t in chart["texts"] if " · " in t]
    assert labels == ["m1 · Color", "m2 · Text Rendering", "m2 · Man-Made Objects"]
    assert chart["titles"] == [  # each dot's tooltip: deficit [interval]
        "m1 · Color: -50.00 [-50.00, -50.00]",
        "m2 · Text Rendering: -65.00 [-65.00, -33.33]",
        "m2 · Man-Made Objects: -50.00 [-50.00, -50.00]",
    ]
