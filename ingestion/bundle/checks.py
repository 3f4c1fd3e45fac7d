"""Checks over the tables as read (validation layers 2 and 3 of `ingestion.bundle`): each rule a
query in an in-memory DuckDB, so the checks stay vectorised at paper scale, plus the parent graph
(parents inside the prompt, self-parents, cycles) in networkx."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import duckdb
import networkx as nx
import pyarrow as pa
import pyarrow.compute as pc

from ingestion.bundle.format import SAFE_ID_PATTERN, SAFE_ID_RULE, TABLES, TableSpec, is_safe_id
from ingestion.bundle.problems import LINE, Problem
from ingestion.bundle.read import ReadTable

_BCP47 = "[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*"


@dataclass(frozen=True)
class _Check:
    """A query selecting (line, reason) for every offending row of `table`."""

    table: str
    sql: str
    needs: tuple[str, ...] = ()  # tables it refers to, which must have been read completely
    skip: str | None = None  # a column whose type errors it must not report again as nulls
    # Id columns the query selects after the reason: a row whose id is unsafe was reported by the
    # id checks, and is not reported again as, say, an unknown model.
    ids: tuple[str, ...] = ()


def _row_check(table: str, condition: str, reason: str, skip: str | None = None) -> _Check:
    return _Check(table, f"SELECT {LINE}, {reason} FROM {table} WHERE {condition}", skip=skip)


def shape_checks(spec: TableSpec, table: pa.Table) -> list[_Check]:
    checks = []
    for c in spec.columns:
        name = c.name
        if not c.nullable:
            checks.append(_row_check(spec.name, f"{name} IS NULL", f"'missing {name}'", skip=name))
        if c.is_safe_id_column and _has_suspect_ids(table[name]):
            checks += _id_checks(spec.name, name)
        if c.type == pa.float64():
            reason = f"format('{name} must be a finite number, got {{}}', {name})"
            checks.append(_row_check(spec.name, f"NOT isfinite({name})", reason))
        if c.type == pa.list_(pa.string()):
            reason = f"'{name} must be a list of strings; it holds a null'"
            checks.append(_row_check(spec.name, f"list_count({name}) < len({name})", reason))
    return checks


def _has_suspect_ids(ids: pa.ChunkedArray) -> bool:
    """Whether any id is empty or unsafe, judged on the distinct ids (thousands among millions of
    rows, so this costs milliseconds): the queries that find their rows run only when one is."""
    distinct = pc.unique(ids).drop_null()
    safe = pc.and_(
        pc.match_substring_regex(distinct, f"^(?:{SAFE_ID_PATTERN})$"),
        pc.invert(pc.match_substring(distinct, "..")),
    )
    return not pc.all(safe).as_py()


_SAFE_ID_RULE_SQL = SAFE_ID_RULE.replace("'", "''")


def _id_checks(table: str, column: str) -> list[_Check]:
    """Rows whose id is empty, or unsafe as a file name (`bundle_format.is_safe_id`)."""
    safe = f"(regexp_full_match({column}, '{SAFE_ID_PATTERN}') AND NOT contains({column}, '..'))"
    unsafe = f"format('{column} {{}} is not a safe id ({_SAFE_ID_RULE_SQL})', shown({column}))"
    return [
        _row_check(table, f"trim({column}) = ''", f"'empty {column}'"),
        _row_check(table, f"trim({column}) <> '' AND NOT {safe}", unsafe),
    ]


def _reported_keys_excluded(keys: tuple[str, ...], alias: str = "") -> str:
    """A condition leaving out rows whose key is null or an empty id (the shape checks say so)."""
    conditions = [f"{alias}{key} IS NOT NULL" for key in keys]
    conditions += [f"trim({alias}{key}) <> ''" for key in keys if key.endswith("_id")]
    return " AND ".join(conditions)


def _id_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(key for key in keys if key.endswith("_id"))


def _duplicate_check(table: str, keys: tuple[str, ...]) -> _Check:
    listed = ", ".join(keys)
    shown = " || ', ' || ".join(f"q({key})" for key in keys)
    label, value = (keys[0], shown) if len(keys) == 1 else (f"({listed})", f"'(' || {shown} || ')'")
    not_null = _reported_keys_excluded(keys)
    ids = _id_keys(keys)
    selected = "".join(f", t.{key}" for key in ids)
    sql = f"""
        SELECT t.{LINE},
            format('duplicate {label} {{}} (first on line {{}})', {value}, d.first_line){selected}
        FROM {table} t JOIN (
            SELECT {listed}, min({LINE}) AS first_line FROM {table} WHERE {not_null}
            GROUP BY {listed} HAVING count(*) > 1
        ) d USING ({listed})
        WHERE t.{LINE} > d.first_line"""
    return _Check(table, sql, ids=ids)


def _reference_check(table: str, keys: tuple[str, ...], target: str, reason: str) -> _Check:
    """Rows whose `keys` match no row of `target`."""
    listed = ", ".join(keys)
    not_null = _reported_keys_excluded(keys, "t.")
    ids = _id_keys(keys)
    selected = "".join(f", t.{key}" for key in ids)
    sql = f"""
        SELECT t.{LINE}, {reason}{selected}
        FROM {table} t ANTI JOIN {target} USING ({listed})
        WHERE {not_null}"""
    return _Check(table, sql, needs=(target,) if target in TABLES else (), ids=ids)


def meaning_checks(check_generators: bool) -> list[_Check]:
    finite = "isfinite({0}) AND {0} {1}"
    checks = [_duplicate_check(name, spec.key) for name, spec in TABLES.items()]
    checks += [
        _row_check(
            "prompts",
            f"NOT regexp_full_match(language, '{_BCP47}')",
            "format('language {} is not a BCP-47 code', q(language))",
        ),
        _reference_check(
            "prompts",
            ("prompt_id",),
            "questions",
            "format('prompt {} has no questions', q(prompt_id))",
        ),
        _reference_check(
            "questions",
            ("capability",),
            "taxonomy",
            "format('unknown capability {} (not in the taxonomy)', q(capability))",
        ),
        _row_check(
            "questions",
            "compliant_answer NOT IN ('yes', 'no')",
            "format('compliant_answer must be ''yes'', ''no'' or null, got {}', "
            "q(compliant_answer))",
        ),
        _row_check(
            "questions",
            "trim(capability_source) = ''",
            "'empty capability_source (null when unknown)'",
        ),
        _row_check(
            "questions",
            "rule_capability NOT IN (SELECT capability FROM taxonomy)",
            "format('unknown rule_capability {} (not in the taxonomy)', q(rule_capability))",
        ),
        _row_check(
            "generators",
            finite.format("cost_gpu_s_per_mp", "< 0"),
            "format('cost_gpu_s_per_mp must be >= 0, got {}', cost_gpu_s_per_mp)",
        ),
        _row_check(
            "judgments",
            "answer NOT IN ('yes', 'no')",
            "format('answer must be ''yes'', ''no'' or null, got {}', q(answer))",
        ),
        _row_check(
            "judgments",
            finite.format("p_yes", "NOT BETWEEN 0 AND 1"),
            "format('p_yes must be within [0, 1], got {}', p_yes)",
        ),
        _reference_check(
            "judgments",
            ("prompt_id", "question_id"),
            "questions",
            "format('no question {} in prompt {}', q(question_id), q(prompt_id))",
        ),
        _row_check(
            "transcriptions",
            "status NOT IN ('ok', 'unavailable')",
            "format('status must be ''ok'' or ''unavailable'', got {}', q(status))",
        ),
        _row_check(
            "images",
            finite.format("latency_s", "< 0"),
            "format('latency_s must be >= 0, got {}', latency_s)",
        ),
    ]
    for column in ("width", "height", "gpus"):
        reason = f"format('{column} must be > 0, got {{}}', {column})"
        checks.append(_row_check("images", f"{column} <= 0", reason))
    checks.append(
        _row_check(
            "ratings",
            "trim(scale) = ''",
            "'empty scale (name the rating scale, e.g. likert_1_5)'",
        )
    )
    checks += [
        _row_check(
            "conversion_report",
            "action NOT IN ('repaired', 'dropped')",
            "format('action must be ''repaired'' or ''dropped'', got {}', q(action))",
        ),
        _row_check("conversion_report", "line < 1", "format('line must be >= 1, got {}', line)"),
    ]
    for table in ("questions", "images", "transcriptions", "ratings"):
        reason = "format('unknown prompt {}', q(prompt_id))"
        checks.append(_reference_check(table, ("prompt_id",), "prompts", reason))
    if check_generators:
        for table in ("images", "judgments", "transcriptions", "ratings"):
            reason = "format('model {} is not listed in generators', q(model_id))"
            checks.append(_reference_check(table, ("model_id",), "generators", reason))
    return checks


def checks_connection(capabilities: Iterable[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory database (validation never touches the warehouse) with the taxonomy and the
    macros the reasons use: q(x) quotes a value; shown(x) quotes a suspect id as JSON, so that a NUL
    or a line break is visible, and cuts a long one short."""
    con = duckdb.connect()
    con.execute("CREATE MACRO q(x) AS '''' || CAST(x AS VARCHAR) || ''''")
    con.execute(
        "CREATE MACRO shown(x) AS CAST(to_json(left(x, 40)) AS VARCHAR) || CASE "
        "WHEN length(x) > 40 THEN format('... ({:,} characters)', length(x)) ELSE '' END"
    )
    con.register("taxonomy", pa.table({"capability": pa.array(sorted(capabilities), pa.string())}))
    return con


def run_checks(read: Mapping[str, ReadTable], capabilities: Iterable[str]) -> list[Problem]:
    con = checks_connection(capabilities)
    try:
        for name, table in read.items():
            con.register(name, table.table)
        checks = [check for r in read.values() for check in shape_checks(r.spec, r.table)]
        generators = read["generators"]
        checks += meaning_checks(generators.complete and generators.table.num_rows > 0)
        problems = []
        for check in checks:
            if read[check.table].whole and all(read[name].complete for name in check.needs):
                problems += problems_of(con, check, read[check.table])
        return problems
    finally:
        con.close()


def problems_of(con: duckdb.DuckDBPyConnection, check: _Check, read: ReadTable) -> list[Problem]:
    rows = con.execute(check.sql).fetchall()
    if check.ids:  # a Python loop over the rows found wrong, usually none
        rows = [(line, reason) for line, reason, *ids in rows if all(map(is_safe_id, ids))]
    if check.skip:
        rows = [
            (line, reason) for line, reason in rows if (line, check.skip) not in read.type_errors
        ]
    return [Problem(read.file, line, reason) for line, reason in rows]


def parent_problems(read: ReadTable) -> list[Problem]:
    """Parents outside the prompt, self-parents, repeated parents and cycles, prompt by prompt."""
    columns = read.table.select(["prompt_id", "question_id", "parents", LINE]).to_pydict()
    rows = list(zip(*columns.values(), strict=True))
    first_line: dict[str, dict[str, int]] = defaultdict(
        dict
    )  # prompt -> question -> its first line
    for prompt, question, _parents, line in rows:
        if prompt is not None and question is not None:
            first_line[prompt].setdefault(question, line)
    edges: dict[str, list[tuple[str, str]]] = defaultdict(list)  # prompt -> (parent, child)
    problems = []
    for prompt, question, parents, line in rows:
        if prompt is None or question is None or not parents:
            continue
        for reason, parent in _edge_reasons(prompt, question, parents, first_line[prompt]):
            if reason:
                problems.append(Problem(read.file, line, reason))
            elif first_line[prompt][question] == line:  # a duplicate row's edges are not the graph
                edges[prompt].append((parent, question))
    for prompt, prompt_edges in edges.items():
        problems += _cycle_problems(read.file, prompt, prompt_edges, first_line[prompt])
    return problems


def _edge_reasons(prompt, question, parents, known) -> Iterable[tuple[str | None, str]]:
    """(reason, parent) for each listed parent; reason None for a sound edge."""
    seen = set()
    for parent in parents:
        if parent is None:
            continue  # reported by the shape checks
        if parent == question:
            yield f"question {question!r} lists itself as a parent", parent
        elif parent not in known:
            yield f"parent {parent!r} is not a question of prompt {prompt!r}", parent
        elif parent in seen:
            yield f"parent {parent!r} is listed twice", parent
        else:
            yield None, parent
        seen.add(parent)


def _left_after_topological_sort(edges: list[tuple[str, str]]) -> set[str]:
    """Questions a topological sort cannot reach: those on a cycle or below one (usually none).

    A plain Kahn sort, because building a networkx graph for each of ~10k prompts costs seconds.
    """
    children: dict[str, list[str]] = defaultdict(list)
    waiting: Counter[str] = Counter()
    for parent, child in edges:
        children[parent].append(child)
        waiting[child] += 1
    ready = [question for question in children if not waiting[question]]
    while ready:
        for child in children[ready.pop()]:
            waiting[child] -= 1
            if not waiting[child]:
                ready.append(child)
    return {question for question, count in waiting.items() if count}


def _cycle_problems(file: str, prompt: str, edges, first_line: dict[str, int]) -> list[Problem]:
    """One problem per cycle (strongly connected questions), at its first question's line."""
    stuck = _left_after_topological_sort(edges)
    if not stuck:
        return []
    problems = []
    graph = nx.DiGraph((parent, child) for parent, child in edges if child in stuck)
    for component in nx.strongly_connected_components(graph):
        if len(component) > 1:
            members = sorted(component, key=first_line.__getitem__)
            listed = ", ".join(repr(question) for question in members)
            reason = f"questions {listed} of prompt {prompt!r} form a cycle of parents"
            problems.append(Problem(file, first_line[members[0]], reason))
    return problems
