"""The leaderboard as people read it, straight from `marts.fct_hcq_leaderboard`."""

from __future__ import annotations

from pathlib import Path

import duckdb

from method.taxonomy import Taxonomy

SCOPE_ORDER = ("en", "zh", "bilingual", "pooled")


def _group_columns(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(group key, group name) in reporting order, from the taxonomy seed."""
    taxonomy = Taxonomy.from_arrow(con.sql("select * from seeds.capabilities").fetch_arrow_table())
    return list(zip(taxonomy.groups, taxonomy.group_names, strict=True))


def format_leaderboard(warehouse: Path, scopes: tuple[str, ...] = ("en", "zh", "bilingual")) -> str:
    """One block per language scope: rank, generator, HCQ total and the group views, in points."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        groups = _group_columns(con)
        group_sql = ", ".join(f'"{key}"' for key, _ in groups)
        rows = con.sql(
            f"select language_scope, rank, display_name, hcq_total, {group_sql}, text_evidence "
            "from marts.fct_hcq_leaderboard order by language_scope, rank nulls last, model_id"
        ).fetchall()
    headers = ["rank", "generator", "total", *(key for key, _ in groups)]
    blocks = []
    for scope in scopes:
        scope_rows = [r for r in rows if r[0] == scope]
        if not scope_rows:
            continue
        body = [
            [str(r[1] or "-"), r[2], *(_points(v) for v in r[3 : 4 + len(groups)])]
            for r in scope_rows
        ]
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(headers)]
        lines = [f"HCQ leaderboard: {scope} (points; text from {scope_rows[0][-1]})"]
        lines.append(
            "  ".join(
                h.ljust(w) if i < 2 else h.rjust(w)
                for i, (h, w) in enumerate(zip(headers, widths, strict=True))
            )
        )
        for b in body:
            lines.append(
                "  ".join(
                    c.ljust(w) if i < 2 else c.rjust(w)
                    for i, (c, w) in enumerate(zip(b, widths, strict=True))
                )
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
