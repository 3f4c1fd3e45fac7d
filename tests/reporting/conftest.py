"""Fixtures of the report tests: a small simulated world published by `qct2i demo` (every mart has
rows), the hand world (several marts empty), and headless Chromium.

Chromium is Debian's (`/usr/bin/chromium`, which `.ci/run` installs when missing), driven by
Playwright; Playwright's own browser downloads are never used. A missing browser skips, or fails
under CI=true.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import copy_warehouse, running_under_ci


@dataclass(frozen=True)
class DemoRun:
    warehouse: Path
    stdout: str


@pytest.fixture(scope="module")
def demo_run(small_demo) -> DemoRun:
    """`qct2i demo` on a small world (the session's, tests/conftest.py): the Dagster job wrote
    the report beside the warehouse. Tests only read both."""
    return DemoRun(*small_demo)


@pytest.fixture(scope="module")
def hand_warehouse(hand_published, tmp_path_factory) -> Path:
    """A copy of the session's published hand warehouse (`qct2i report` writes beside it)."""
    return copy_warehouse(hand_published, tmp_path_factory.mktemp("report-hand"))


def _require(found: object, what: str) -> None:
    if found:
        return
    if running_under_ci():
        pytest.fail(f"{what}; CI=true requires it (.ci/run installs chromium)", pytrace=False)
    pytest.skip(f"{what} (under CI=true this fails)")


@pytest.fixture(scope="session")
def chromium():
    """A headless Debian chromium under Playwright, for the whole session."""
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    _require(Path(executable).exists(), f"no chromium at {executable}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _require(False, "the playwright package is not installed (pip install -e '.[dev]')")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True)
        yield browser
        browser.close()


@dataclass
class Visit:
    """What a page load showed: per chart its SVG count, marks and rendered size; every console
    error or uncaught exception; every request other than the file itself (all refused)."""

    charts: dict[str, dict] = field(default_factory=dict)
    tables: list[str] = field(default_factory=list)
    cells: dict[str, list[list[str]]] = field(default_factory=dict)  # per table: its rows' text
    active: list[str] = field(default_factory=list)  # script, img, iframe, ... elements, by tag
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


CHART_FACTS = """() => Object.fromEntries([...document.querySelectorAll('[data-chart]')].map(f => {
    const svgs = [...f.querySelectorAll('svg')];
    const box = svgs.length ? svgs[0].getBoundingClientRect() : {width: 0, height: 0};
    return [f.dataset.chart, {
        id: f.id, empty: f.dataset.empty === 'true', svgs: svgs.length,
        marks: f.querySelectorAll('svg .mark').length,
        elements: f.querySelectorAll('svg *').length,
        width: box.width, height: box.height,
        titles: [...f.querySelectorAll('svg .mark > title')].map(t => t.textContent),
        texts: [...f.querySelectorAll('svg text')].map(t => t.textContent),
    }];
}))"""


TABLE_CELLS = """() => Object.fromEntries([...document.querySelectorAll('[data-table]')].map(t =>
    [t.dataset.table, [...t.querySelectorAll('tbody tr')].map(
        r => [...r.querySelectorAll('td')].map(c => c.textContent))]))"""
# Elements that run, load or embed something: a report has none, whatever its evidence says.
ACTIVE_ELEMENTS = """() => [...document.querySelectorAll(
    'script, img, iframe, object, embed, link, a[href]:not([href^="#"]), [onerror], [onload]'
)].map(e => e.tagName.toLowerCase())"""


def visit_offline(browser, html: Path, screenshot: Path) -> Visit:
    """Open `html` with the network off (an offline context, and every request but the file's
    own aborted and recorded), take a full-page screenshot, and collect what the page shows."""
    visit = Visit()
    document = html.resolve().as_uri()
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})

    def refuse(route):
        if route.request.url == document:
            route.continue_()
        else:
            visit.requests.append(route.request.url)
            route.abort()

    context.route("**/*", refuse)
    page = context.new_page()
    page.on("console", lambda m: visit.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: visit.errors.append(str(e)))
    page.goto(document, wait_until="load")
    page.screenshot(path=str(screenshot), full_page=True)
    visit.charts = page.evaluate(CHART_FACTS)
    visit.tables = page.evaluate(
        "() => [...document.querySelectorAll('[data-table]')].map(t => t.dataset.table)"
    )
    visit.cells = page.evaluate(TABLE_CELLS)
    visit.active = page.evaluate(ACTIVE_ELEMENTS)
    context.close()
    return visit
