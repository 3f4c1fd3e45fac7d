"""The Superset dashboard kept in bi/superset/ (Superset's export format, imported by `make bi`:
docs/bi.md) fits the marts it reads. Superset itself is not installed here (`make bi` has its own
environment, outside `make test`); these checks read the bundle's files."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

import duckdb
import yaml

from bi.provision import BUNDLE, ROOT, bundle_zip

# the story the issue asks the dashboard to tell (issue 34), one chart each
CHARTS = (
    "HCQ leaderboard with rank intervals",
    "Capability heatmap (English prompts)",
    "Worst capabilities per generator (English prompts)",
    "Judge agreement (Cohen's kappa with intervals)",
    "Routing cost-quality frontier (Q-Profile-C and fixed generators)",
)


def bundle() -> dict[str, dict]:
    """Every file of the bundle, parsed, by its path under bi/superset/."""
    return {
        path.relative_to(BUNDLE).as_posix(): yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted(BUNDLE.rglob("*.yaml"))
    }


def of_kind(files: dict[str, dict], folder: str) -> list[dict]:
    return [doc for name, doc in files.items() if name.startswith(folder + "/")]


def chart_columns(chart: dict) -> set[str]:
    """The dataset columns a chart's parameters name."""
    params = chart["params"]
    named = set(params.get("all_columns", []))
    for key in ("x_axis", "groupby"):
        value = params.get(key)
        named |= set(value) if isinstance(value, list) else {value} if value else set()
    named |= {f["subject"] for f in params.get("adhoc_filters", []) if "subject" in f}
    return named


def test_the_bundle_is_whole_and_reads_the_warehouse_read_only():
    """Guards against an import that fails or dangles: every chart names a dataset of the bundle,
    every dataset its one database, the dashboard places every chart; and against a read-write
    registration (a BI connection that leaves a write-ahead log stops `qct2i build` publishing):
    the URI `make bi` writes names the warehouse with DuckDB's read_only access mode."""
    files = bundle()
    (database,) = of_kind(files, "databases")
    datasets = {d["uuid"]: d for d in of_kind(files, "datasets")}
    charts = of_kind(files, "charts")
    (dashboard,) = of_kind(files, "dashboards")
    assert files["metadata.yaml"]["type"] == "Dashboard"
    assert {d["database_uuid"] for d in datasets.values()} == {database["uuid"]}
    assert all(c["dataset_uuid"] in datasets for c in charts)
    assert len(charts) == len({c["uuid"] for c in charts}) == len(CHARTS)
    placed = {v["meta"]["uuid"] for v in dashboard["position"].values() if _is_chart(v)}
    assert placed == {c["uuid"] for c in charts}

    with zipfile.ZipFile(io.BytesIO(bundle_zip(Path("/data/w.duckdb")))) as archive:
        text = archive.read("qct2i_dashboard/databases/qct2i.yaml").decode()
        assert sorted(archive.namelist()) == sorted(f"qct2i_dashboard/{n}" for n in files)
    assert (
        yaml.safe_load(text)["sqlalchemy_uri"] == "duckdb:////data/w.duckdb?access_mode=read_only"
    )


def _is_chart(component) -> bool:
    return isinstance(component, dict) and component.get("type") == "CHART"


def test_every_dataset_and_chart_column_is_in_the_published_marts(small_demo):
    """Guards against a dashboard that breaks silently when a mart changes: each dataset's query
    (its SQL, or its mart) runs read-only on a published warehouse and returns the dataset's
    columns, in order, and every column a chart names is one of its dataset's."""
    warehouse, _ = small_demo
    files = bundle()
    datasets = {d["uuid"]: d for d in of_kind(files, "datasets")}
    with duckdb.connect(str(warehouse), read_only=True) as con:
        for dataset in datasets.values():
            query = dataset["sql"] or f"select * from {dataset['schema']}.{dataset['table_name']}"
            returned = con.sql(query).columns
            assert returned == [c["column_name"] for c in dataset["columns"]], dataset["table_name"]
    for chart in of_kind(files, "charts"):
        columns = {c["column_name"] for c in datasets[chart["dataset_uuid"]]["columns"]}
        assert chart_columns(chart) <= columns, chart["slice_name"]


def test_the_dbt_exposure_names_every_mart_the_dashboard_reads():
    """Guards against lineage that drifts from the dashboard: every mart a dataset reads (its
    table, or each `marts.<name>` of its SQL) is in the `bi_dashboard` exposure's depends_on."""
    exposures = yaml.safe_load((ROOT / "models/marts/_exposures.yml").read_text())["exposures"]
    (dashboard,) = [e for e in exposures if e["name"] == "bi_dashboard"]
    refs = {re.fullmatch(r"ref\('(\w+)'\)", d).group(1) for d in dashboard["depends_on"]}
    read = set()
    for dataset in of_kind(bundle(), "datasets"):
        sql = dataset["sql"]
        read |= set(re.findall(r"marts\.(\w+)", sql)) if sql else {dataset["table_name"]}
    assert read == {
        "fct_hcq_leaderboard",
        "fct_rank_reliability",
        "fct_capability_scores",
        "fct_capability_deficits",
        "fct_judge_agreement",
        "agg_router_frontier",
    }
    assert read <= refs


def test_the_dashboard_holds_the_five_charts_of_the_story():
    """Guards against a chart lost from the dashboard (a layout edited in Superset and exported
    without it, or a chart file dropped): the five charts the issue lists are each a chart of the
    bundle, placed once, each by a chart id of its own."""
    files = bundle()
    (dashboard,) = of_kind(files, "dashboards")
    by_uuid = {c["uuid"]: c["slice_name"] for c in of_kind(files, "charts")}
    placed = [v["meta"] for v in dashboard["position"].values() if _is_chart(v)]
    assert sorted(by_uuid[m["uuid"]] for m in placed) == sorted(CHARTS)
    assert all(m["sliceName"] == by_uuid[m["uuid"]] for m in placed)
    assert len({m["chartId"] for m in placed}) == len(CHARTS)
