"""The HTML report (issue 13) as an asset downstream of the marts it reads: written from the
published warehouse once the dbt assets have published it, its path and file URL as metadata."""

from pathlib import Path

import dagster as dg

from ingestion.paths import warehouse_path
from reporting.html_report import REPORT_MARTS, default_report_path, write_report


class ReportConfig(dg.Config):
    out: str | None = None  # default: report.html beside the published warehouse


@dg.asset(
    group_name="report",
    deps=[dg.AssetKey(["marts", mart]) for mart in REPORT_MARTS],
    description="One self-contained HTML file (inline SVG charts, works offline) from the "
    "published warehouse: leaderboards, capabilities, Figures 2-4, routing, reliability.",
)
def report(context: dg.AssetExecutionContext, config: ReportConfig) -> dg.MaterializeResult:
    warehouse = warehouse_path()
    out = Path(config.out).resolve() if config.out else default_report_path(warehouse)
    write_report(warehouse, out)
    context.log.info(f"wrote the report {out}")
    return dg.MaterializeResult(
        metadata={
            "path": dg.MetadataValue.path(str(out)),
            "url": dg.MetadataValue.url(out.as_uri()),
            "bytes": out.stat().st_size,
        }
    )
