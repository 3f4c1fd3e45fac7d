"""The report's "where each generator fails" section (issues 24, 32) in headless Chromium: its
chart holds the mart's worst capabilities and quotes the mart's draw counts, its examples are the
mart's rows joined to the chart's (each judge's own word and whether it complies), and evidence
text that looks like markup (a prompt, a question, an image path) is shown as text: nothing runs,
loads or is embedded.

The edits go into a copy of the hand warehouse's marts (the report reads them; dbt passes the
bundle's text through unchanged, so this is what a bundle with such text would give, without
another build)."""

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
EDITED_DRAWS = 1234  # no build's draw count: the chart can only have it from the mart


@pytest.fixture(scope="module")
def edited_report(hand_published, tmp_path_factory):
    """The hand warehouse with hostile evidence text in every example, every deficit's draw
    count set to EDITED_DRAWS, and m2's man_made example made a question whose compliant answer
    is "no" (the judge's stored "no" is then its own "yes"); the report written once."""
    folder = tmp_path_factory.mktemp("edited-report")
    warehouse = copy_warehouse(hand_published, folder)
    with duckdb.connect(str(warehouse)) as con:
        con.execute(
            "update marts.fct_failure_examples set prompt_text = ?, question_text = ?, "
            "image_path = ?",
            list(HOSTILE.values()),
        )
        con.execute("update marts.fct_capability_deficits set n_draws = ?", [EDITED_DRAWS])
        con.execute(
            "update marts.fct_failure_examples set compliant_answer = 'no', "
            "judges = [{'judge_id': 'default', 'raw_answer': 'yes', 'complies': false}] "
            "where model_id = 'm2' and capability = 'man_made'"
        )
    return warehouse, write_report(warehouse, folder / "report.html")


@pytest.fixture(scope="module")
def edited_visit(edited_report, chromium):
    _, report = edited_report
    return visit_offline(chromium, report, report.with_suffix(".png"))


def test_hostile_evidence_text_is_shown_as_text(edited_report, edited_visit):
    warehouse, _ = edited_report
    visit = edited_visit
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
        assert row[7] == HOSTILE["image_path"]


def test_examples_give_each_judges_own_word_in_the_charts_order(edited_visit):
    """The examples table showed the stored (target-yes) answer, "default: no" where the judge
    said yes, and filtered the whole mart in Python. By hand (tests/marts/test_failures.py): the
    chart's rows are m1 Color, m2 Text Rendering, m2 Man-Made; m1's color example is cA-en q2
    (the judge said no, compliant yes), m2 has no text_rendering example, and m2's man_made
    example, edited to compliant "no", shows the judge's own "yes"."""
    shown = [[r[0], r[1], r[2], r[5], r[6]] for r in edited_visit.cells["failure-examples"]]
    assert shown == [
        ["m1", "Color", "cA-en", "yes", "default: no (fails)"],
        ["m2", "Man-Made Objects", "cA-en", "no", "default: yes (fails)"],
    ]


def test_the_chart_quotes_the_marts_draw_count(edited_report):
    """The chart said "2,000 draws" whatever the build used: its figure is the mart's n_draws."""
    _, report = edited_report
    page = report.read_text(encoding="utf-8")
    assert f"95% interval over {EDITED_DRAWS:,} paired concept-bootstrap draws" in page
    assert "2,000" not in page.split('id="chart-capability-deficits"')[1].split("</figure>")[0]


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
    # the shown rows' draw counts differ (color needs concept cA, text rendering cB): a range
    ((fewest, most),) = query(
        hand_published,
        "select min(n_draws), max(n_draws) from marts.fct_capability_deficits "
        "where language_scope = 'pooled' and deficit < 0 and deficit_rank <= 3",
    )
    assert fewest < most
    assert f"over {fewest:,}–{most:,} paired" in report.read_text(encoding="utf-8")
