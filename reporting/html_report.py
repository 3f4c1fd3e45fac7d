"""`qct2i report` and the Dagster `report` asset: one self-contained HTML file from the published
warehouse (issue 13).

The file holds its charts as inline SVG drawn here in Python and its style inline: no script, no
font, image or stylesheet to fetch, so it opens offline and makes no network request. The same
warehouse gives the same bytes: nothing in it comes from the clock, only from the warehouse.
"""

from __future__ import annotations

import os
from html import escape
from pathlib import Path

from reporting.facts import column_names, judgment_counts
from reporting.page import Section, render_section
from reporting.reader import Reader, open_reader
from reporting.sections.agreement import agreement_section
from reporting.sections.common import count
from reporting.sections.failures import failures_section
from reporting.sections.reliability import reliability_section
from reporting.sections.routing import routing_section
from reporting.sections.scoring import scoring_section
from reporting.sections.structure import structure_section

REPORT_NAME = "report.html"

# The marts the sections read (the dbt exposure `html_report` and the Dagster asset `report` list
# them as its inputs; tests/reporting/test_html_report.py holds the three equal).
REPORT_MARTS = (
    "fct_hcq_leaderboard",
    "fct_rank_reliability",
    "fct_capability_scores",
    "fct_question_records",
    "agg_exactness_by_tag_count",
    "fct_root_controls",
    "fct_coupling",
    "fct_coupling_contrast",
    "fct_composition_fingerprints",
    "agg_router_frontier",
    "agg_router_summary",
    "fct_router_paired",
    "fct_router_excluded_generators",
    "fct_masking_effect",
    "fct_aggregation_robustness",
    "fct_capability_deficits",
    "fct_failure_examples",
)
# Read when the warehouse has them (CONTRACTS "Additions"; built from multi-judge evidence and
# human ratings), else the report says they are missing.
OPTIONAL_MARTS = ("fct_judge_agreement", "fct_human_agreement")

STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue",
       Arial, sans-serif; color: #1d1d1f; margin: 0; background: #fff; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 60px; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 21px; margin: 40px 0 6px; padding-top: 12px; border-top: 2px solid #d9dde3; }
h3 { font-size: 15px; margin: 0 0 8px; }
p.intro, p.lede { color: #444; max-width: 900px; margin: 4px 0 14px; }
nav { margin: 12px 0 4px; font-size: 14px; }
nav a { margin-right: 14px; color: #2b5d8a; }
dl.provenance { display: grid; grid-template-columns: max-content 1fr; gap: 3px 16px;
                font-size: 13.5px; background: #f6f7f9; padding: 12px 16px; border-radius: 6px; }
dl.provenance dt { color: #555; }
dl.provenance dd { margin: 0; overflow-wrap: anywhere; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
.items { display: flex; flex-wrap: wrap; gap: 22px 28px; align-items: flex-start; }
figure { margin: 0; max-width: 100%; }
figure.chart .svg { overflow-x: auto; }
figure svg { max-width: 100%; height: auto; display: block; }
figure svg text { font-family: inherit; }
figcaption.how { font-size: 12.5px; color: #555; max-width: 760px; margin-top: 6px; }
p.empty, p.note { font-size: 13.5px; color: #6b4e00; background: #fff8e6; padding: 8px 12px;
                  border-left: 3px solid #e0b000; max-width: 760px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e6e8eb; }
th { color: #555; font-weight: 600; border-bottom: 1px solid #999; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.text, th.text { text-align: left; }
tbody tr:nth-child(odd) { background: #f9fafb; }
"""


def default_report_path(warehouse: Path) -> Path:
    """`report.html` beside the published warehouse."""
    return warehouse.parent / REPORT_NAME


def render_report(warehouse: Path) -> str:
    with open_reader(warehouse) as reader:
        sections = [
            scoring_section(reader),
            failures_section(reader),
            structure_section(reader),
            routing_section(reader),
            reliability_section(reader),
            agreement_section(reader),
        ]
        header = _header(reader)
    return _page(header, sections)


def write_report(warehouse: Path, out: Path) -> Path:
    """Write the report to `out` whole (a temporary file renamed into place); returns `out`."""
    html = render_report(warehouse)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    partial.write_text(html, encoding="utf-8")
    os.replace(partial, out)
    return out


def _page(header: str, sections: list[Section]) -> str:
    nav = " ".join(f'<a href="#{s.anchor}">{escape(s.title)}</a>' for s in sections)
    body = "\n".join(render_section(s) for s in sections)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        # no request of any kind: nothing to fetch, and a policy that would refuse it anyway
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "style-src 'unsafe-inline'; img-src data:\">\n"
        "<title>QC-T2I report</title>\n"
        f"<style>{STYLE}</style>\n</head>\n<body>\n<main>\n{header}\n"
        f"<nav>{nav}</nav>\n{body}\n</main>\n</body>\n</html>\n"
    )


def _header(reader: Reader) -> str:
    facts = _provenance(reader)
    rows = "\n".join(f"<dt>{escape(k)}</dt><dd>{v}</dd>" for k, v in facts)
    return (
        "<header>\n<h1>QC-T2I evaluation report</h1>\n"
        '<p class="lede">Question-centric evaluation of text-to-image generators, read from the '
        "published warehouse. Scores are in points (0-100). Hover over a mark for its exact "
        "figure.</p>\n"
        f'<dl class="provenance">\n{rows}\n</dl>\n</header>'
    )


def _provenance(reader: Reader) -> list[tuple[str, str]]:
    """(label, HTML) pairs: the bundle(s), the build, the judge and how many records."""
    facts = [("evidence bundle", _bundles(reader))]
    build = reader.rows("select * from main.build_id") if reader.has("main", "build_id") else []
    if build:
        b = build[0]
        facts.append(
            (
                "build",
                f"<code>{escape(str(b['build_id']))}</code>, built "
                f"{escape(str(b['built_at']))[:19]} UTC",
            )
        )
        facts.append(("code version", f"<code>{escape(str(b.get('code_version')))}</code>"))
        fingerprint = escape(str(b.get("evidence_fingerprint")))
        facts.append(("evidence fingerprint", f"<code>{fingerprint}</code>"))
    else:
        facts.append(("build", "no build stamp (main.build_id) in this warehouse"))
    facts.append(("judge", _judges(reader)))
    facts.append(("records", _records(reader)))
    return facts


def _bundles(reader: Reader) -> str:
    if not reader.has("raw", "bundle_imports"):
        return "not recorded (no raw.bundle_imports)"
    order = (
        "imported_at" if "imported_at" in column_names(reader.con, "raw", "bundle_imports") else "1"
    )
    imports = reader.rows(f"select * from raw.bundle_imports order by {order}")
    lines = [
        f"<code>{escape(str(i.get('bundle_path')))}</code>"
        + (f", imported {escape(str(i['imported_at']))[:19]} UTC" if i.get("imported_at") else "")
        for i in imports
    ]
    return "<br>".join(lines) or "none recorded"


def _judges(reader: Reader) -> str:
    columns = [
        c
        for c in ("judge_id", "judge_model", "judge_revision")
        if c in column_names(reader.con, "raw", "judgments")
    ]
    if not columns:
        return "not recorded in the evidence (the bundle's judgments name no judge)"
    listed = ", ".join(columns)
    judges = reader.rows(
        f"select {listed}, count(*) as n from raw.judgments group by all order by {listed}"
    )
    return "<br>".join(
        escape(" / ".join(str(j[c]) for c in columns if j[c] is not None) or "unnamed")
        + f" ({count(j['n'])} judgments)"
        for j in judges
    )


def _records(reader: Reader) -> str:
    counts = judgment_counts(reader.con)
    prompts = reader.rows("select count(*) as n from raw.prompts")[0]["n"]
    return (
        f"{count(counts.records)} question records (generator × prompt × question) from "
        f"{count(prompts)} prompts and {len(reader.models)} generators<br>"
        f"missing judgments (no usable answer): {count(counts.missing)}; answered but masked "
        f"(a prerequisite failed, METHOD 2): {count(counts.masked)}"
    )
