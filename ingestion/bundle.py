"""Read, validate and load an evidence bundle (CONTRACTS.md, "The evidence bundle").

A bundle is refused as a whole, with every problem listed at once, or accepted as a whole: nothing
of a refused bundle reaches the warehouse. Validation runs in three layers, each on whatever the
previous layer could read, so one run reports everything that can be known:

0. a release's manifest (`manifest.json`, ingestion/manifest.py), when the bundle has one: a file
   changed, missing or not listed refuses the bundle before anything is read;
1. files: a required table's file missing, a table present in both formats, a folder where a file
   should be, an unreadable file (a truncated or corrupt Parquet file, text that is not UTF-8);
2. shapes, row by row: malformed JSON lines (a key repeated within one object, a line over
   16 MiB), values of the wrong type, missing values in non-nullable columns, empty or unsafe
   identifiers (`bundle_format.is_safe_id`: ids may name files), non-finite numbers, null
   elements in lists;
3. meaning: duplicate keys (each table's `TableSpec.key`), references to unknown
   prompts/questions/generators/capabilities, parents outside the prompt, self-parents and cycles,
   out-of-domain values (language, answer, p_yes, status, sizes, latency, cost).

README "What the importer refuses" lists every class with its message.

A check that looks rows up in another table runs only if that table was read completely, so a bad
line is reported once rather than echoed by every row that refers to it.

Leniencies, chosen so that files written by other tools load as well as our own:
- columns the contract does not know are ignored (they never reach the warehouse);
- a nullable column may be left out (a missing JSONL key, a missing Parquet column): it reads as
  null, or as the column's default where it has one (a judgment naming no `judge_id` is judge
  `default`);
- a UTF-8 byte order mark at the start of a JSONL file is dropped, and CRLF line ends read as LF;
- an answer that is `yes` or `no` up to case and surrounding white space (`"Yes"`, `" NO "`: VLM
  judges print capitals) is stored as `yes` / `no`; any other string (`"1"`, `"true"`, `"y"`,
  `""`) is refused, never guessed;
- an optional table's file without rows is the same as an absent one.

JSONL is read through pyarrow's vectorised reader when a cheap pre-screen says the reader can be
trusted with the file (it reads a bare `null` line as a row and can crash on some non-object lines);
any doubt, or any error, sends the file through the per-line Python reader, which locates problems.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import networkx as nx
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from ingestion import raw_tables
from ingestion.bundle_format import (
    QUESTION_ORDER,
    SAFE_ID_PATTERN,
    SAFE_ID_RULE,
    TABLES,
    Column,
    TableSpec,
    is_safe_id,
)
from ingestion.manifest import manifest_problems
from ingestion.paths import SEEDS_DIR

DEFAULT_TAXONOMY_SEED = SEEDS_DIR / "capabilities.csv"
LINE = "_line"  # internal column: the row's 1-based line (JSONL) or row (Parquet) number

_STRING = pa.string()
_INT = pa.int64()
_FLOAT = pa.float64()
_STRINGS = pa.list_(pa.string())
_KIND = {_STRING: "a string", _INT: "an integer", _FLOAT: "a number", _STRINGS: "a list of strings"}
_NUMBER_KINDS = (pa.types.is_integer, pa.types.is_floating, pa.types.is_decimal)
_STRING_KINDS = (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view)
_LIST_KINDS = (pa.types.is_list, pa.types.is_large_list)  # not list views: pyarrow 26 casts
# them to lists with a broken offsets buffer
_BCP47 = "[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*"
_CHUNK_LINES = 50_000  # after a failed fast read, the size of the pieces it is retried on
_JSON_BLOCK_BYTES = 16 << 20  # pyarrow refuses lines longer than a block; the slow path takes those
# No line may be longer than a block: no sane row needs it, and a 100 MB line of garbage is then
# refused by its length instead of being parsed.
_MAX_LINE_BYTES = _JSON_BLOCK_BYTES
_BOM = b"\xef\xbb\xbf"  # UTF-8 byte order mark, which some Windows tools write first
_ANSWERS = pa.array(["yes", "no"])
_UNPARSED = ("not valid JSON", "line is not valid UTF-8")  # reasons of lines that did not parse
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # a cheap screen for the next check


@dataclass(frozen=True)
class Problem:
    """One reason to refuse a bundle: the file (the table, if no file) and the 1-based line."""

    file: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.reason}"


class BundleError(Exception):
    """A bundle was refused; `problems` lists every problem found, in file and line order."""

    def __init__(self, folder: Path, problems: list[Problem]):
        self.folder = folder
        self.problems = problems
        listed = "\n".join(str(problem) for problem in problems)
        super().__init__(f"bundle {folder} refused ({len(problems)} problems):\n{listed}")


def default_capabilities(seed: Path = DEFAULT_TAXONOMY_SEED) -> set[str]:
    """The capability keys of the taxonomy seed, read at call time because users may replace it."""
    with seed.open(newline="", encoding="utf-8") as handle:
        return {row["capability"] for row in csv.DictReader(handle)}


# --------------------------------------------------------------------------------------------------
# Reading one table
# --------------------------------------------------------------------------------------------------


@dataclass
class _ReadTable:
    """One table as read, before the meaning checks: spec columns (all nullable) plus LINE."""

    spec: TableSpec
    file: str
    table: pa.Table
    # False when the file is missing, ambiguous, unreadable or lacks columns: its rows can be
    # neither checked nor used as another table's reference set (that would echo the cause).
    whole: bool = True
    problems: list[Problem] = field(default_factory=list)
    # (line, column) whose value had the wrong type: read as null, it must not be reported twice.
    type_errors: set[tuple[int, str]] = field(default_factory=set)

    @property
    def complete(self) -> bool:
        """Whether every row was read with every key: only then can other tables refer to it."""
        return self.whole and not self.problems


def _read_schema(spec: TableSpec) -> pa.Schema:
    """The spec's schema, every field nullable: nulls are reported by the checks, not the reader."""
    return pa.schema([pa.field(c.name, c.type) for c in spec.columns])


def _with_lines(columns: Mapping[str, pa.Array | pa.ChunkedArray], spec, lines) -> pa.Table:
    arrays = [columns[c.name] for c in spec.columns] + [pa.array(lines, _INT)]
    return pa.Table.from_arrays(arrays, schema=_read_schema(spec).append(pa.field(LINE, _INT)))


def _empty(spec: TableSpec) -> pa.Table:
    return _with_lines({c.name: pa.array([], c.type) for c in spec.columns}, spec, [])


def _unusable(spec: TableSpec, file: str, reason: str) -> _ReadTable:
    """A table none of whose rows can be used, for one reason about its file as a whole."""
    return _ReadTable(spec, file, _empty(spec), False, [Problem(file, None, reason)])


def _read_table(folder: Path, spec: TableSpec) -> _ReadTable:
    jsonl, parquet = folder / f"{spec.name}.jsonl", folder / f"{spec.name}.parquet"
    if jsonl.exists() and parquet.exists():
        reason = f"both {jsonl.name} and {parquet.name} are present; keep one"
        return _unusable(spec, spec.name, reason)
    if not (jsonl.exists() or parquet.exists()):
        if spec.required:
            reason = f"required file is missing (expected {jsonl.name} or {parquet.name})"
            return _unusable(spec, spec.name, reason)
        return _ReadTable(spec, spec.name, _empty(spec))
    path = jsonl if jsonl.exists() else parquet
    if not path.is_file():  # a folder (a partitioned dataset, say) or a device
        return _unusable(spec, path.name, "not a regular file (a bundle holds one file per table)")
    read = _read_jsonl(path, spec) if path == jsonl else _read_parquet(path, spec)
    if read.whole and spec.required and read.table.num_rows == 0 and not read.problems:
        read.problems.append(Problem(read.file, None, "required table has no rows"))
        read.whole = False
    if spec.name == "judgments":
        read.table = _normalised_answers(read.table)
    _fill_defaults(read)
    return read


def _fill_defaults(read: _ReadTable) -> None:
    """A column's `default` in place of its nulls (a missing `judge_id` is judge `default`), before
    any check: the duplicate check and the append's key matching then see the stored value. A
    value read as null because it had the wrong type stays null: it is reported as it is."""
    for index, column in enumerate(read.spec.columns):
        values = read.table[column.name]
        if column.default is None or not values.null_count:
            continue
        fill = pc.is_null(values)
        mistyped = [line for line, name in read.type_errors if name == column.name]
        if mistyped:
            mistyped_lines = pa.array(mistyped, _INT)
            fill = pc.and_(fill, pc.invert(pc.is_in(read.table[LINE], value_set=mistyped_lines)))
        filled = pc.if_else(fill, pa.scalar(column.default, column.type), values)
        read.table = read.table.set_column(index, read.table.field(index), filled)


def _normalised_answers(judgments: pa.Table) -> pa.Table:
    """`yes` / `no` for answers that are those words up to case and surrounding white space (VLM
    judges print "Yes"); every other value as written, for the answer check to refuse."""
    answers = judgments["answer"]
    folded = pc.utf8_lower(pc.utf8_trim_whitespace(answers))
    normalised = pc.if_else(pc.is_in(folded, value_set=_ANSWERS), folded, answers)
    return judgments.set_column(judgments.schema.get_field_index("answer"), "answer", normalised)


def _read_parquet(path: Path, spec: TableSpec) -> _ReadTable:
    try:
        with pq.ParquetFile(path) as parquet:
            table = parquet.read()
    except Exception as error:  # any reader failure is the same problem: the file cannot be used
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        return _unusable(spec, path.name, f"cannot read Parquet file: {first_line}")
    repeated = sorted(name for name, n in Counter(table.column_names).items() if n > 1)
    if repeated:
        return _unusable(spec, path.name, f"column {repeated[0]!r} appears more than once")
    problems, columns = [], {}
    for column in spec.columns:
        columns[column.name], reason = _parquet_column(table, column)
        if reason:
            problems.append(Problem(path.name, None, reason))
    problems = problems or _invalid_utf8(path.name, columns)
    if problems:
        return _ReadTable(spec, path.name, _empty(spec), False, problems)
    return _ReadTable(spec, path.name, _with_lines(columns, spec, range(1, table.num_rows + 1)))


def _invalid_utf8(file: str, columns: Mapping[str, pa.ChunkedArray]) -> list[Problem]:
    """One problem per row holding a string that is not UTF-8: Parquet writers need not check,
    and such a string would crash DuckDB in the checks below."""
    problems = []
    for name, values in columns.items():
        try:
            values.validate(full=True)  # vectorised; includes the UTF-8 check of string data
        except pa.ArrowInvalid as invalid:
            reason = f"'{name}' is not valid UTF-8"
            rows = _rows_not_utf8(values)
            problems += [Problem(file, row, reason) for row in rows]
            if not rows:  # broken some other way
                problems.append(Problem(file, None, f"column '{name}' is corrupt: {invalid}"))
    return problems


def _rows_not_utf8(values: pa.ChunkedArray) -> list[int]:
    """The 1-based rows whose string (or a string of whose list) does not decode; a Python loop,
    run only on a file already found bad."""
    values = values.combine_chunks()
    rows = range(len(values))
    if pa.types.is_list(values.type):
        rows = pc.list_parent_indices(values).to_pylist()
        values = pc.list_flatten(values)
    bad = set()
    for row, raw in zip(rows, values.view(pa.binary()).to_pylist(), strict=True):
        try:
            raw is None or raw.decode("utf-8")
        except UnicodeDecodeError:
            bad.add(row + 1)
    return sorted(bad)


def _parquet_column(table: pa.Table, column: Column) -> tuple[pa.ChunkedArray | None, str | None]:
    """The column cast to the spec type, or the reason it cannot be (never a lossy cast)."""
    if column.name not in table.column_names:
        if column.nullable:
            return pa.chunked_array([pa.nulls(table.num_rows, column.type)]), None
        return None, f"missing column '{column.name}'"
    values = table[column.name]
    if _castable(values.type, column.type):
        try:
            return values.cast(column.type), None
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass  # e.g. a uint64 beyond int64
    return None, f"column '{column.name}' has type {values.type}; expected {_KIND[column.type]}"


def _castable(source: pa.DataType, target: pa.DataType) -> bool:
    if pa.types.is_null(source):
        return True
    if pa.types.is_dictionary(source):
        return _castable(source.value_type, target)
    if target == _STRING:  # string views too: Polars writes them
        return any(is_kind(source) for is_kind in _STRING_KINDS)
    if target == _INT:
        return pa.types.is_integer(source)
    if target == _FLOAT:  # decimals too: SQL engines write numeric literals as DECIMAL
        return any(is_kind(source) for is_kind in _NUMBER_KINDS)
    is_list = any(is_kind(source) for is_kind in _LIST_KINDS)
    return is_list and _castable(source.value_type, _STRING)


def _read_jsonl(path: Path, spec: TableSpec) -> _ReadTable:
    """The file's rows and the problems of its lines.

    The fast reader takes the whole file if it can; if not, it is tried chunk by chunk, and only the
    chunks it refuses are parsed line by line, so one bad line among millions stays cheap.
    """
    try:
        data = path.read_bytes()
    except OSError as error:
        return _unusable(spec, path.name, f"cannot read file: {error.strerror or error}")
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    table = _read_jsonl_fast(data, spec, first_line=1)
    if table is not None:
        return _ReadTable(spec, path.name, table)
    read = _ReadTable(spec, path.name, _empty(spec))
    raw_lines = data.split(b"\n")  # only \n ends a line: JSON strings may hold U+2028 and friends
    if raw_lines[-1] == b"":
        raw_lines.pop()  # the final newline ends the last line, it does not start a new one
    pieces = [read.table]
    for start in range(0, len(raw_lines), _CHUNK_LINES):
        chunk = raw_lines[start : start + _CHUNK_LINES]
        table = _read_jsonl_fast(b"\n".join(chunk), spec, first_line=start + 1)
        if table is None or table.num_rows != len(chunk):  # a blank last line joins invisibly
            table = _read_lines(chunk, start + 1, read)
        pieces.append(table)
    read.table = pa.concat_tables(pieces)
    if data and not data.endswith(b"\n"):
        _hint_truncation(read, last_line=len(raw_lines))
    return read


def _hint_truncation(read: _ReadTable, last_line: int) -> None:
    """A last line that does not parse and has no line end is most likely a file cut short."""
    hint = "; the file ends inside this line without a line end, so it may be truncated"
    read.problems = [
        Problem(p.file, p.line, p.reason + hint)
        if p.line == last_line and p.reason.startswith(_UNPARSED)
        else p
        for p in read.problems
    ]


def _line_count(data: bytes) -> int:
    """Lines as the per-line reader sees them: a final newline ends the last line, it adds none."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _read_jsonl_fast(data: bytes, spec: TableSpec, first_line: int) -> pa.Table | None:
    """The lines through pyarrow's reader, or None when it might be wrong about them.

    pyarrow's reader skips blank lines, reads a bare `null` line as a row of nulls, crashes on some
    non-object lines and does not check UTF-8, so it only gets data whose every line starts with
    `{`, that decodes, and whose row count matches the line count. What it accepts beyond that
    (nulls, NaN, null list elements) the shape checks catch, as for the per-line reader.
    """
    lines = _line_count(data)
    if lines == 0 or not data.startswith(b"{") or data.count(b"\n{") != lines - 1:
        return None
    try:
        data.decode("utf-8")
        table = pa_json.read_json(
            pa.BufferReader(data),
            read_options=pa_json.ReadOptions(block_size=_JSON_BLOCK_BYTES),
            parse_options=pa_json.ParseOptions(
                explicit_schema=_read_schema(spec), unexpected_field_behavior="ignore"
            ),
        )
    except (UnicodeDecodeError, pa.ArrowInvalid):
        return None
    if table.num_rows != lines:
        return None
    columns = {
        c.name: table[c.name] if c.name in table.column_names else pa.nulls(lines, c.type)
        for c in spec.columns
    }
    return _with_lines(columns, spec, range(first_line, first_line + lines))


def _read_lines(raw_lines: list[bytes], first_line: int, read: _ReadTable) -> pa.Table:
    """Parse line by line, adding to `read` each unreadable line and each value of the wrong type.

    A malformed line contributes no row; a value of the wrong type is read as null so that the rest
    of its row is still checked.
    """
    spec, file = read.spec, read.file
    values: dict[str, list] = {c.name: [] for c in spec.columns}
    lines: list[int] = []
    for number, raw in enumerate(raw_lines, start=first_line):
        record, reason = _parse_line(raw)
        if reason:
            read.problems.append(Problem(file, number, reason))
            continue
        lines.append(number)
        for column in spec.columns:
            value = record.get(column.name)
            if value is not None and not _fits(value, column.type):
                reason = f"'{column.name}' must be {_KIND[column.type]}, got {_show(value)}"
                read.problems.append(Problem(file, number, reason))
                read.type_errors.add((number, column.name))
                value = None
            values[column.name].append(value)
    arrays = {c.name: pa.array(values[c.name], c.type) for c in spec.columns}
    return _with_lines(arrays, spec, lines)


class _RepeatedKey(ValueError):
    pass


def _object_of_unique_keys(pairs: list[tuple[str, object]]) -> dict:
    """A JSON object, refusing a repeated key: which of its values counts is not defined (RFC 8259
    section 4), and pyarrow and Python's json would disagree."""
    record = dict(pairs)
    if len(record) < len(pairs):
        repeated = next(key for key, count in Counter(k for k, _ in pairs).items() if count > 1)
        raise _RepeatedKey(repeated)
    return record


def _parse_line(raw: bytes) -> tuple[dict | None, str | None]:
    if len(raw) > _MAX_LINE_BYTES:
        return None, f"line is {len(raw):,} bytes long; the limit is {_MAX_LINE_BYTES >> 20} MiB"
    if not raw.strip():
        return None, "blank line (every line must hold one JSON object)"
    try:
        record = json.loads(raw.decode("utf-8"), object_pairs_hook=_object_of_unique_keys)
    except UnicodeDecodeError:
        return None, "line is not valid UTF-8"
    except json.JSONDecodeError as error:
        return None, f"not valid JSON ({error.msg} at column {error.colno})"
    except _RepeatedKey as error:
        return None, f"key {_show(error.args[0])} appears twice in the object"
    except RecursionError:
        return None, "not valid JSON (nested too deeply to read)"
    except ValueError as error:  # an integer of more than 4,300 digits
        return None, f"not valid JSON ({str(error).split(':')[0]})"
    if not isinstance(record, dict):
        return None, f"not a JSON object (got {type(record).__name__})"
    if _SURROGATE_ESCAPE.search(raw) and _holds_lone_surrogate(record):
        return None, "a \\u escape names half of a surrogate pair alone, which is no character"
    return record, None


def _holds_lone_surrogate(record: dict) -> bool:
    """Whether a `\\ud800`-style escape decoded to half a surrogate pair, which no UTF-8 can hold
    (pyarrow refuses such a line; Python's json reads it)."""
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _fits(value: object, type_: pa.DataType) -> bool:
    """Whether a JSON value has the column's type; null list elements are left to shape checks."""
    if type_ == _STRING:
        return isinstance(value, str)
    if type_ == _INT:
        return type(value) is int and -(2**63) <= value < 2**63
    if type_ == _FLOAT:
        return type(value) is float or (type(value) is int and abs(value) < 2**1023)
    return isinstance(value, list) and all(item is None or isinstance(item, str) for item in value)


def _show(value: object) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 60 else shown[:57] + "..."


# --------------------------------------------------------------------------------------------------
# Checks over the tables as read (DuckDB in memory, so they stay vectorised at paper scale)
# --------------------------------------------------------------------------------------------------


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


def _shape_checks(spec: TableSpec, table: pa.Table) -> list[_Check]:
    checks = []
    for c in spec.columns:
        name = c.name
        if not c.nullable:
            checks.append(_row_check(spec.name, f"{name} IS NULL", f"'missing {name}'", skip=name))
        if c.is_safe_id_column and _has_suspect_ids(table[name]):
            checks += _id_checks(spec.name, name)
        if c.type == _FLOAT:
            reason = f"format('{name} must be a finite number, got {{}}', {name})"
            checks.append(_row_check(spec.name, f"NOT isfinite({name})", reason))
        if c.type == _STRINGS:
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


def _meaning_checks(check_generators: bool) -> list[_Check]:
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


def _checks_connection(capabilities: Iterable[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory database (validation never touches the warehouse) with the taxonomy and the
    macros the reasons use: q(x) quotes a value; shown(x) quotes a suspect id as JSON, so that a NUL
    or a line break is visible, and cuts a long one short."""
    con = duckdb.connect()
    con.execute("CREATE MACRO q(x) AS '''' || CAST(x AS VARCHAR) || ''''")
    con.execute(
        "CREATE MACRO shown(x) AS CAST(to_json(left(x, 40)) AS VARCHAR) || CASE "
        "WHEN length(x) > 40 THEN format('... ({:,} characters)', length(x)) ELSE '' END"
    )
    con.register("taxonomy", pa.table({"capability": pa.array(sorted(capabilities), _STRING)}))
    return con


def _run_checks(read: Mapping[str, _ReadTable], capabilities: Iterable[str]) -> list[Problem]:
    con = _checks_connection(capabilities)
    try:
        for name, table in read.items():
            con.register(name, table.table)
        checks = [check for r in read.values() for check in _shape_checks(r.spec, r.table)]
        generators = read["generators"]
        checks += _meaning_checks(generators.complete and generators.table.num_rows > 0)
        problems = []
        for check in checks:
            if read[check.table].whole and all(read[name].complete for name in check.needs):
                problems += _problems_of(con, check, read[check.table])
        return problems
    finally:
        con.close()


def _problems_of(con: duckdb.DuckDBPyConnection, check: _Check, read: _ReadTable) -> list[Problem]:
    rows = con.execute(check.sql).fetchall()
    if check.ids:  # a Python loop over the rows found wrong, usually none
        rows = [(line, reason) for line, reason, *ids in rows if all(map(is_safe_id, ids))]
    if check.skip:
        rows = [
            (line, reason) for line, reason in rows if (line, check.skip) not in read.type_errors
        ]
    return [Problem(read.file, line, reason) for line, reason in rows]


def _parent_problems(read: _ReadTable) -> list[Problem]:
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


# --------------------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------------------


def read_bundle(
    folder: Path, capabilities: set[str] | None = None, with_lines: bool = False
) -> dict[str, pa.Table]:
    """Every table of the bundle in `folder`, validated, or BundleError listing every problem.

    Absent optional tables come back empty. `questions` gains `question_order` (placed after
    `question_id`): the question's 1-based position within its prompt, in file order.
    `capabilities` defaults to the taxonomy seed's keys. `with_lines` keeps each row's 1-based
    line (JSONL) or row (Parquet) number as a last column, `LINE`, for messages about rows that
    only later checks find wrong (the append import's contradictions).
    """
    folder = Path(folder)
    # a release's manifest (`qct2i export`) is checked before any file is read: a file that is not
    # the one the exporter wrote is refused, whatever it now holds
    mismatches = manifest_problems(folder)
    if mismatches:
        raise BundleError(folder, [Problem(file, None, reason) for file, reason in mismatches])
    if capabilities is None:
        capabilities = default_capabilities()
    read = {name: _read_table(folder, spec) for name, spec in TABLES.items()}
    problems = [problem for table in read.values() for problem in table.problems]
    problems += _run_checks(read, capabilities)
    if read["questions"].whole:
        problems += _parent_problems(read["questions"])
    if problems:
        raise BundleError(folder, sorted(problems, key=_problem_order))
    return {name: _accepted_table(table, with_lines) for name, table in read.items()}


def read_questions_file(path: Path, capabilities: set[str] | None = None) -> pa.Table:
    """One `questions` file on its own (new requests to route), validated by the bundle's rules
    for that table, or BundleError listing every problem as file, line and reason.

    The same reading, shape and meaning checks as in `read_bundle` (duplicate ids, unknown
    capability, parents outside the prompt, self-parents, cycles, ...), minus the checks that
    need other tables. Returns the table with `question_order`, as `read_bundle` does.
    """
    path = Path(path)
    if capabilities is None:
        capabilities = default_capabilities()
    spec = TABLES["questions"]
    readers = {".jsonl": _read_jsonl, ".parquet": _read_parquet}
    if path.suffix not in readers or not path.is_file():
        reason = "not found" if not path.exists() else "expected a .jsonl or .parquet file"
        raise BundleError(path, [Problem(path.name, None, reason)])
    read = readers[path.suffix](path, spec)
    if read.whole and read.table.num_rows == 0 and not read.problems:
        read.problems.append(Problem(read.file, None, "the file has no questions"))
        read.whole = False
    problems = list(read.problems)
    if read.whole:
        checks = _shape_checks(spec, read.table) + [
            check for check in _meaning_checks(False) if check.table == spec.name
        ]
        con = _checks_connection(capabilities)
        try:
            con.register(spec.name, read.table)
            for check in checks:
                if not check.needs:
                    problems += _problems_of(con, check, read)
        finally:
            con.close()
        problems += _parent_problems(read)
    if problems:
        raise BundleError(path, sorted(problems, key=lambda p: (p.line or 0, p.reason)))
    return _accepted_table(read)


def _problem_order(problem: Problem) -> tuple[int, int, str]:
    table = Path(problem.file).stem  # 'questions.jsonl' and a missing file's 'questions' alike
    return list(TABLES).index(table), problem.line or 0, problem.reason


def _accepted_table(read: _ReadTable, with_lines: bool = False) -> pa.Table:
    table = read.table.drop_columns([LINE]).cast(read.spec.schema)
    if read.spec.name == "questions":
        position = table.column_names.index("question_id") + 1
        order = pa.field(QUESTION_ORDER, _INT, nullable=False)
        table = table.add_column(position, order, pa.array(_question_order(table), _INT))
    if with_lines:
        table = table.append_column(pa.field(LINE, _INT, nullable=False), read.table[LINE])
    return table


def _question_order(questions: pa.Table) -> list[int]:
    seen: Counter[str] = Counter()
    order = []
    for prompt in questions["prompt_id"].to_pylist():
        seen[prompt] += 1
        order.append(seen[prompt])
    return order


def load_bundle(
    folder: Path, warehouse: Path, capabilities: set[str] | None = None
) -> dict[str, int]:
    """Validate the bundle, then replace the warehouse's raw tables with it in one transaction.

    Returns the row count of every table. A refused bundle raises BundleError before the warehouse
    is opened; a failure while writing rolls back, leaving the previous raw tables as they were.
    """
    folder, warehouse = Path(folder), Path(warehouse)
    tables = read_bundle(folder, capabilities)
    with raw_tables.raw_transaction(warehouse) as con:
        raw_tables.replace_raw_tables(con, folder, tables)
    return {name: table.num_rows for name, table in tables.items()}
