"""Read-only access to a published warehouse for the report: rows as dicts, and the one order,
name and colour of each generator that every chart shares."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from reporting.facts import has_relation
from reporting.leaderboard import SCOPE_ORDER
from reporting.svg import CATEGORICAL

LANGUAGE_ORDER = ("en", "zh")


@dataclass
class Reader:
    con: duckdb.DuckDBPyConnection
    models: list[str]  # bilingual rank order, then the rest by id: the order of every chart
    names: dict[str, str]  # model_id -> display name

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        result = self.con.execute(sql, list(params))
        columns = [d[0] for d in result.description]
        return [dict(zip(columns, row, strict=True)) for row in result.fetchall()]

    def has(self, schema: str, name: str) -> bool:
        return has_relation(self.con, schema, name)

    def name(self, model_id: str) -> str:
        return self.names.get(model_id, model_id)

    def color(self, model_id: str) -> str:
        index = self.models.index(model_id) if model_id in self.models else len(self.models)
        return CATEGORICAL[index % len(CATEGORICAL)]

    def languages(self) -> list[str]:
        """The evidence's languages, en and zh first: one chart per language in the structure
        figures, whether or not a mart has rows for it."""
        found = [r["language"] for r in self.rows("select distinct language from raw.prompts")]
        return ordered(found, LANGUAGE_ORDER)

    def scopes(self, relation: str) -> list[str]:
        """The language scopes a mart holds, in reporting order."""
        found = [
            r["language_scope"]
            for r in self.rows(f"select distinct language_scope from marts.{relation}")
        ]
        return ordered(found, SCOPE_ORDER)


def ordered(values: Sequence[str], preferred: Sequence[str]) -> list[str]:
    """`values` with the `preferred` ones first (in that order), then the rest sorted."""
    present = set(values)
    return [v for v in preferred if v in present] + sorted(present - set(preferred))


def _models(con: duckdb.DuckDBPyConnection) -> tuple[list[str], dict[str, str]]:
    rows = con.execute(
        "select model_id, display_name from marts.fct_hcq_leaderboard "
        "order by language_scope <> 'bilingual', rank nulls last, model_id"
    ).fetchall()
    models = list(dict.fromkeys(model_id for model_id, _ in rows))
    return models, {model_id: name or model_id for model_id, name in rows}


@contextlib.contextmanager
def open_reader(warehouse: Path) -> Iterator[Reader]:
    """The published warehouse, read-only: a running build is not disturbed, and nothing is
    written beside the file."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        models, names = _models(con)
        yield Reader(con=con, models=models, names=names)
