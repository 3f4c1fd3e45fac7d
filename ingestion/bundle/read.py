"""Reading one table of a bundle (validation layers 1 and 2 of `ingestion.bundle`): the file
found, opened and parsed, each value checked against its column's type.

JSONL is read through pyarrow's vectorised reader when a cheap pre-screen says the reader can be
trusted with the file (it reads a bare `null` line as a row and can crash on some non-object lines);
any doubt, or any error, sends the file through the per-line Python reader, which locates problems.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from ingestion.bundle.format import Column, TableSpec
from ingestion.bundle.problems import LINE, Problem

_STRING = pa.string()
_INT = pa.int64()
_FLOAT = pa.float64()
_STRINGS = pa.list_(pa.string())
_KIND = {_STRING: "a string", _INT: "an integer", _FLOAT: "a number", _STRINGS: "a list of strings"}
_NUMBER_KINDS = (pa.types.is_integer, pa.types.is_floating, pa.types.is_decimal)
_STRING_KINDS = (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view)
_LIST_KINDS = (pa.types.is_list, pa.types.is_large_list)  # not list views: pyarrow 26 casts
# them to lists with a broken offsets buffer
_CHUNK_LINES = 50_000  # after a failed fast read, the size of the pieces it is retried on
_JSON_BLOCK_BYTES = 16 << 20  # pyarrow refuses lines longer than a block; the slow path takes those
# No line may be longer than a block: no sane row needs it, and a 100 MB line of garbage is then
# refused by its length instead of being parsed.
_MAX_LINE_BYTES = _JSON_BLOCK_BYTES
_BOM = b"\xef\xbb\xbf"  # UTF-8 byte order mark, which some Windows tools write first
_ANSWERS = pa.array(["yes", "no"])
_UNPARSED = ("not valid JSON", "line is not valid UTF-8")  # reasons of lines that did not parse
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")  # a cheap screen for the next check


@dataclass
class ReadTable:
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


def _unusable(spec: TableSpec, file: str, reason: str) -> ReadTable:
    """A table none of whose rows can be used, for one reason about its file as a whole."""
    return ReadTable(spec, file, _empty(spec), False, [Problem(file, None, reason)])


def read_table(folder: Path, spec: TableSpec) -> ReadTable:
    jsonl, parquet = folder / f"{spec.name}.jsonl", folder / f"{spec.name}.parquet"
    if jsonl.exists() and parquet.exists():
        reason = f"both {jsonl.name} and {parquet.name} are present; keep one"
        return _unusable(spec, spec.name, reason)
    if not (jsonl.exists() or parquet.exists()):
        if spec.required:
            reason = f"required file is missing (expected {jsonl.name} or {parquet.name})"
            return _unusable(spec, spec.name, reason)
        return ReadTable(spec, spec.name, _empty(spec))
    path = jsonl if jsonl.exists() else parquet
    if not path.is_file():  # a folder (a partitioned dataset, say) or a device
        return _unusable(spec, path.name, "not a regular file (a bundle holds one file per table)")
    read = read_jsonl(path, spec) if path == jsonl else read_parquet(path, spec)
    if read.whole and spec.required and read.table.num_rows == 0 and not read.problems:
        read.problems.append(Problem(read.file, None, "required table has no rows"))
        read.whole = False
    if spec.name == "judgments":
        read.table = _normalised_answers(read.table)
    _fill_defaults(read)
    return read


def _fill_defaults(read: ReadTable) -> None:
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


def read_parquet(path: Path, spec: TableSpec) -> ReadTable:
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
        return ReadTable(spec, path.name, _empty(spec), False, problems)
    return ReadTable(spec, path.name, _with_lines(columns, spec, range(1, table.num_rows + 1)))


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


def read_jsonl(path: Path, spec: TableSpec) -> ReadTable:
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
        return ReadTable(spec, path.name, table)
    read = ReadTable(spec, path.name, _empty(spec))
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


def _hint_truncation(read: ReadTable, last_line: int) -> None:
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


def _read_lines(raw_lines: list[bytes], first_line: int, read: ReadTable) -> pa.Table:
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
            values[column.name].append(_as_read(value, column.type))
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


def _as_read(value: object, type_: pa.DataType) -> object:
    """A JSON integer in a number column as the double the fast reader makes of it: Arrow refuses
    an integer a double cannot hold exactly (above 2**53) where the fast reader rounds it."""
    return float(value) if type_ == _FLOAT and type(value) is int else value


def _show(value: object) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= 60 else shown[:57] + "..."
