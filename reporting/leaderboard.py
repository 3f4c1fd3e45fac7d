"""The leaderboard as people read it, straight from `marts.fct_hcq_leaderboard`: as text for the
terminal (`qct2i leaderboard`, `qct2i demo`) and as markdown for Dagster's asset metadata."""

from __future__ import annotations

from pathlib import Path

import duckdb

from method.taxonomy import Taxonomy

SCOPE_ORDER = ("en", "zh", "bilingual", "pooled")
DEFAULT_SCOPES = ("en", "zh", "bilingual")


def group_columns(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(group key, group name) in reporting order, from the taxonomy seed."""
    taxonomy = Taxonomy.from_arrow(con.sql("select * from seeds.capabilities").to_arrow_table())
    return list(zip(taxonomy.groups, taxonomy.group_names, strict=True))


def _leaderboard_blocks(
    warehouse: Path, scopes: tuple[str, ...]
) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """Per scope present: (scope, text evidence, headers, rows of cells), in rank order."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        groups = group_columns(con)
        group_sql = ", ".join(f'"{key}"' for key, _ in groups)
        rows = con.sql(
            f"select language_scope, rank, display_name, hcq_total, {group_sql}, "
            "evaluation, prompt_coverage_frac, text_evidence "
            "from marts.fct_hcq_leaderboard order by language_scope, rank nulls last, model_id"
        ).fetchall()
    headers = ["rank", "generator", "total", *(key for key, _ in groups)]
    blocks = []
    for scope in scopes:
        scope_rows = [r for r in rows if r[0] == scope]
        if not scope_rows:
            continue
        body = [
            [str(r[1] or "-"), _generator(r[2], *r[-3:-1]), *map(_points, r[3 : 4 + len(groups)])]
            for r in scope_rows
        ]
        blocks.append((scope, scope_rows[0][-1], headers, body))
    return blocks


def _generator(name: str, evaluation: str, coverage_frac: float) -> str:
    """The generator's name; one evaluated on part of the prompts says so, since its figures are
    the plain HCQ of that part (fct_subset_estimates holds the corrected estimate)."""
    if evaluation == "full":
        return name
    return f"{name} (subset: {100 * coverage_frac:.0f}% of prompts, see fct_subset_estimates)"


def format_leaderboard(warehouse: Path, scopes: tuple[str, ...] = DEFAULT_SCOPES) -> str:
    """One block per language scope: rank, generator, HCQ total and the group views, in points."""
    texts = []
    for scope, text_evidence, headers, body in _leaderboard_blocks(warehouse, scopes):
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(headers)]
        lines = [f"HCQ leaderboard: {scope} (points; text from {text_evidence})"]
        lines += [_aligned(cells, widths) for cells in (headers, *body)]
        texts.append("\n".join(lines))
    return "\n\n".join(texts)


def leaderboard_markdown(warehouse: Path, scopes: tuple[str, ...] = DEFAULT_SCOPES) -> str:
    """The same blocks as markdown tables (Dagster shows them on the leaderboard asset)."""
    texts = []
    for scope, text_evidence, headers, body in _leaderboard_blocks(warehouse, scopes):
        lines = [f"**HCQ leaderboard: {scope}** (points; text from {text_evidence})", ""]
        lines.append("| " + " | ".join(headers) + " |")
        lines.append("| " + " | ".join(["---", "---", *["---:"] * (len(headers) - 2)]) + " |")
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in b) + " |" for b in body]
        texts.append("\n".join(lines))
    return "\n\n".join(texts)


def _aligned(cells: list[str], widths: list[int]) -> str:
    """Rank and generator left-aligned, the figures right-aligned."""
    return "  ".join(
        c.ljust(w) if i < 2 else c.rjust(w)
        for i, (c, w) in enumerate(zip(cells, widths, strict=True))
    )


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
