"""What a report section holds (charts, small tables, notes) and how each becomes HTML.

Every chart is a <figure> with a stable `id` (`chart-<chart_id>`) and `data-chart`, every table a
<figure> with `data-table`, so readers can link to them and tests can find them. A chart whose
mart has no rows says so in place of the picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape


@dataclass(frozen=True)
class Chart:
    chart_id: str
    title: str
    how_to_read: str
    svg: str | None  # None: nothing to draw, `empty` says why
    empty: str = ""


@dataclass(frozen=True)
class Table:
    table_id: str
    title: str
    headers: Sequence[str]
    rows: Sequence[Sequence[str]]
    how_to_read: str
    text_columns: int = 1  # the first columns hold text (left-aligned); the rest figures
    empty: str = ""


@dataclass(frozen=True)
class Note:
    text: str


@dataclass(frozen=True)
class Section:
    anchor: str
    title: str
    intro: str
    items: Sequence[Chart | Table | Note] = field(default_factory=tuple)


def render_section(section: Section) -> str:
    body = "\n".join(_render_item(item) for item in section.items)
    return (
        f'<section id="{escape(section.anchor)}">\n<h2>{escape(section.title)}</h2>\n'
        f'<p class="intro">{escape(section.intro)}</p>\n<div class="items">\n{body}\n</div>\n'
        "</section>"
    )


def _render_item(item: Chart | Table | Note) -> str:
    if isinstance(item, Chart):
        return render_chart(item)
    if isinstance(item, Table):
        return render_table(item)
    return f'<p class="note">{escape(item.text)}</p>'


def _how_to_read(text: str) -> str:
    return f'<figcaption class="how"><b>How to read this:</b> {escape(text)}</figcaption>'


def render_chart(chart: Chart) -> str:
    cid = escape(chart.chart_id)
    if chart.svg is None:
        picture = f'<p class="empty">{escape(chart.empty)}</p>'
        attributes = f'class="chart empty" id="chart-{cid}" data-chart="{cid}" data-empty="true"'
    else:
        picture = f'<div class="svg">{chart.svg}</div>'
        attributes = f'class="chart" id="chart-{cid}" data-chart="{cid}"'
    return (
        f"<figure {attributes}>\n<h3>{escape(chart.title)}</h3>\n{picture}\n"
        f"{_how_to_read(chart.how_to_read)}\n</figure>"
    )


def render_table(table: Table) -> str:
    tid = escape(table.table_id)
    if not table.rows:
        body = f'<p class="empty">{escape(table.empty)}</p>'
    else:
        head = "".join(
            f'<th class="{_align(k, table)}">{escape(h)}</th>' for k, h in enumerate(table.headers)
        )
        rows = "\n".join(
            "<tr>"
            + "".join(f'<td class="{_align(k, table)}">{escape(c)}</td>' for k, c in enumerate(row))
            + "</tr>"
            for row in table.rows
        )
        body = f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody>\n</table>"
    return (
        f'<figure class="table" id="table-{tid}" data-table="{tid}">\n'
        f"<h3>{escape(table.title)}</h3>\n{body}\n{_how_to_read(table.how_to_read)}\n</figure>"
    )


def _align(column: int, table: Table) -> str:
    return "text" if column < table.text_columns else "num"
