"""The warehouse in a live Superset (issue 34, `make test-bi`; not part of `make test` or CI:
tests/bi/conftest.py): every mart answers through Superset's API, the dashboard renders every
chart in Chromium, and a build published while the dashboard is open shows in the next query.

The tests run in this order (the last one publishes a new build over the shared warehouse)."""

from __future__ import annotations

import re
import threading
import time

import pytest

from bi.provision import LOGIN, ROOT
from tests.helpers import query, run_cli
from tests.reporting.conftest import chromium  # noqa: F401 (the session's headless Chromium)

pytestmark = [pytest.mark.e2e, pytest.mark.bi]

DASHBOARD = "/superset/dashboard/qct2i/"
N_CHARTS = 5  # tests/qct2i/test_superset_bundle.py: CHARTS
SAMPLE_ROWS = 5
SCREENSHOT = ROOT / "docs" / "bi_dashboard.png"
LEADERBOARD = "hcq_leaderboard"  # the leaderboard chart's dataset (bi/superset/datasets/)


def not_for_bi() -> set[tuple[str, str]]:
    """(mart, column) pairs docs/bi.md lists under "Not for BI", with their reason."""
    text = (ROOT / "docs" / "bi.md").read_text(encoding="utf-8")
    section = text.split("### Not for BI", 1)[1].split("\n#", 1)[0]
    return set(re.findall(r"^\| `(\w+)` \| `(\w+)` \|", section, flags=re.MULTILINE))


def api_json(api, method: str, path: str, **kwargs) -> dict:
    response = api.request(method, api.base_url + path, timeout=120, **kwargs)
    assert response.status_code in (200, 201), f"{method} {path}: {response.text[:500]}"
    return response.json()


def warehouse_database_id(api) -> int:
    databases = api_json(api, "GET", "/api/v1/database/")["result"]
    (found,) = [d["id"] for d in databases if d["database_name"] == "QC-T2I warehouse"]
    return found


def datasets_by_table(api) -> dict[str, int]:
    listed = api_json(api, "GET", "/api/v1/dataset/", params={"q": "(page_size:100)"})
    return {d["table_name"]: d["id"] for d in listed["result"]}


def dataset_for(api, mart: str, database: int, existing: dict[str, int]) -> int:
    """The bundle's dataset on the mart, or one created through Superset's API."""
    if mart in existing:
        return existing[mart]
    body = {"database": database, "schema": "marts", "table_name": mart}
    return api_json(api, "POST", "/api/v1/dataset/", json=body)["id"]


def chart_data(api, dataset: int, queries: list[dict]) -> list[dict]:
    """Superset's chart data API (what a chart asks): one result per query. A query without
    `metrics` is a raw one (no GROUP BY), as a table chart in raw mode asks."""
    body = {
        "datasource": {"id": dataset, "type": "table"},
        "queries": queries,
        "result_format": "json",
        "result_type": "full",
    }
    results = api_json(api, "POST", "/api/v1/chart/data", json=body)["result"]
    assert all(r.get("status") in ("success", None) and not r.get("error") for r in results)
    return results


COUNT = {"expressionType": "SQL", "sqlExpression": "COUNT(*)", "label": "n"}


def test_every_mart_answers_through_supersets_api(superset_api, bi_world):
    """Guards against a mart no BI user can read (a type the SQLAlchemy dialect cannot reflect, a
    query Superset cannot run): for every mart of the published warehouse, a dataset (the
    bundle's or one created through the API) returns through Superset's chart data API the
    mart's columns, a sample of min(5, rows) rows and the mart's row count, all as DuckDB read
    directly says; every column whose type Superset does not map is listed in docs/bi.md."""
    warehouse, _ = bi_world
    marts = query(
        warehouse,
        "select table_name, estimated_size from duckdb_tables() where schema_name = 'marts'",
    )
    database = warehouse_database_id(superset_api)
    existing = datasets_by_table(superset_api)
    unmapped = set()
    for mart, _ in sorted(marts):
        columns = [
            c
            for (c,) in query(
                warehouse,
                f"select column_name from duckdb_columns() "
                f"where schema_name = 'marts' and table_name = '{mart}' order by column_index",
            )
        ]
        (n_rows,) = query(warehouse, f"select count(*) from marts.{mart}")[0]
        dataset = dataset_for(superset_api, mart, database, existing)
        described = api_json(superset_api, "GET", f"/api/v1/dataset/{dataset}")["result"]
        unmapped |= {
            (mart, c["column_name"]) for c in described["columns"] if c.get("type_generic") is None
        }
        sample, count = chart_data(superset_api, dataset, [
            {"columns": columns, "row_limit": SAMPLE_ROWS},
            {"metrics": [COUNT], "columns": [], "row_limit": 1},
        ])  # fmt: skip
        assert sample["colnames"] == columns, mart
        assert sample["rowcount"] == min(SAMPLE_ROWS, n_rows), mart
        assert count["data"][0]["n"] == n_rows, mart
    print(f"{len(marts)} marts answered; not mapped by Superset: {sorted(unmapped)}")
    assert unmapped <= not_for_bi(), sorted(unmapped - not_for_bi())


def log_in(page, url: str) -> None:
    """Through the login page's form, as a user does; fails with what the page then says."""
    user, password = LOGIN
    page.goto(f"{url}/login/")
    page.wait_for_selector('[data-test="login-form"]')
    page.fill('[data-test="username-input"]', user)
    page.fill('[data-test="password-input"]', password)
    with page.expect_response(lambda r: r.request.method == "POST" and "/login/" in r.url) as sent:
        page.click('[data-test="login-button"]')
    page.wait_for_load_state("networkidle")
    page.goto(f"{url}/api/v1/me/")
    me = page.inner_text("body")
    assert user in me, f"login: POST {sent.value.status}, then /api/v1/me/ says {me[:300]}"


@pytest.fixture(scope="module")
def dashboard_page(chromium, superset_url):  # noqa: F811
    """The dashboard open in Chromium, logged in, every chart's data answered and drawn; with
    every chart data response it received."""
    context = chromium.new_context(viewport={"width": 1600, "height": 2400})
    page = context.new_page()
    answers = []
    page.on(
        "response",
        lambda r: answers.append(r) if "/api/v1/chart/data" in r.url else None,
    )
    log_in(page, superset_url)
    page.goto(superset_url + DASHBOARD)
    # a chart's grid component; the Markdown note beside judge agreement has the holder alone
    holders = page.locator('[data-test="chart-grid-component"]')
    deadline = time.monotonic() + 180
    while len(answers) < N_CHARTS and time.monotonic() < deadline:
        page.wait_for_timeout(1000)
    page.wait_for_load_state("networkidle")
    page.wait_for_selector('[data-test="loading-indicator"]', state="detached", timeout=120_000)
    yield page, holders, answers
    context.close()


def test_the_dashboard_draws_every_chart_in_chromium(dashboard_page):
    """Guards against a dashboard that imports but does not render (a chart whose query fails in
    Superset, a visualisation that errors, an empty chart over a mart with rows): logged in
    through the login page, the dashboard shows all five charts, each chart data request
    answered 200 with rows, no chart shows an error or "No results"; the screenshot goes to
    docs/bi_dashboard.png."""
    page, holders, answers = dashboard_page
    assert holders.count() == N_CHARTS
    assert len(answers) >= N_CHARTS
    for answer in answers:
        assert answer.status == 200, answer.url
        assert all(r["rowcount"] > 0 for r in answer.json()["result"]), answer.url
    text = page.inner_text("body")
    for problem in ("No results were returned", "Unexpected error", "An error occurred"):
        assert problem not in text
    assert page.locator('[data-test="chart-error"], .ant-alert-error').count() == 0
    for i in range(N_CHARTS):
        drawn = holders.nth(i).locator("table, canvas, svg")
        assert drawn.count() > 0, f"chart {i} drew nothing"
    assert "Judge agreement needs two judges." in text  # the note a one-judge warehouse needs
    page.screenshot(path=str(SCREENSHOT), full_page=True)


def rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 9)


def leaderboard_rows(api, dataset: int) -> list[dict]:
    (result,) = chart_data(api, dataset, [{
        "columns": ["language_scope", "model_id", "hcq_total"], "row_limit": 1000,
    }])  # fmt: skip
    return result["data"]


def test_a_build_while_the_dashboard_is_open_shows_in_the_next_query(
    dashboard_page, superset_api, bi_world
):
    """Guards against a dashboard that keeps the old build (a pooled connection or result cache
    holding the replaced file) and against a build that waits on or fails because of Superset's
    open connections: with the dashboard open and chart queries every second, `qct2i import`
    of the whole world (one generator more) and `qct2i build` succeed; no query fails; the
    next query returns the new build's leaderboard, the added generator's HCQ as DuckDB reads it
    from the new file."""
    from tests.bi.conftest import WITHOUT_MODEL

    warehouse, whole = bi_world
    dataset = datasets_by_table(superset_api)[LEADERBOARD]
    assert WITHOUT_MODEL not in {r["model_id"] for r in leaderboard_rows(superset_api, dataset)}
    failures, queried, done = [], [], threading.Event()

    def keep_querying():
        while not done.is_set():
            try:
                queried.append(len(leaderboard_rows(superset_api, dataset)))
            except AssertionError as failure:
                failures.append(str(failure))
            time.sleep(1)

    poller = threading.Thread(target=keep_querying)
    poller.start()
    try:
        started = time.monotonic()
        imported = run_cli(["import", str(whole)], warehouse)
        built = run_cli(["build"], warehouse)
        print(f"import and build with the dashboard open: {time.monotonic() - started:.0f} s")
    finally:
        done.set()
        poller.join()
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert built.returncode == 0, built.stderr[-2000:]
    assert f"published {warehouse}" in built.stdout
    assert not failures and queried, failures[:3]
    expected = dict(query(warehouse, "select language_scope || '/' || model_id, hcq_total "
                          "from marts.fct_hcq_leaderboard"))  # fmt: skip
    shown = {f"{r['language_scope']}/{r['model_id']}": r["hcq_total"]
             for r in leaderboard_rows(superset_api, dataset)}  # fmt: skip
    assert any(key.endswith("/" + WITHOUT_MODEL) for key in shown)
    assert shown.keys() == expected.keys()
    assert {k: rounded(v) for k, v in shown.items()} == {k: rounded(v) for k, v in expected.items()}
    page, _, _ = dashboard_page
    assert "/login" not in page.url  # the open dashboard's session survived the build
