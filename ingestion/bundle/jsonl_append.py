"""Rows appended to a bundle's JSONL files a batch at a time, and read back.

The GPU drivers (`ingestion.backends.drivers`: images, judgments, transcriptions, questions) and
the image folders drawn elsewhere (`ingestion.sources.image_folder`) append their rows here, so
that every writer of a bundle file takes the same lock, cuts the same torn line and drops the
same duplicate keys. The appender lives in the bundle layer because both of those layers stand
on it and neither may import the other.
"""

from __future__ import annotations

import fcntl
import itertools
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path


def read_rows(path: Path) -> Iterator[dict]:
    """Rows of a JSONL file; a torn last line (a crash mid-write) and blank lines are skipped."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as f:
        yield from _rows_of(itertools.takewhile(lambda line: line.endswith("\n"), f))


def read_numbered_rows(path: Path) -> Iterator[tuple[int, dict]]:
    """(1-based line, row) of the rows `read_rows` yields, lines counted as the import counts
    them (skipped lines included), for messages that name the line."""
    if not path.exists():
        return
    with path.open(encoding="utf-8") as f:
        whole = itertools.takewhile(lambda line: line.endswith("\n"), f)
        for number, line in enumerate(whole, 1):
            for row in _rows_of((line,)):
                yield number, row


def append_rows(path: Path, rows: Sequence[dict], unique_key: str | None = None) -> int:
    """Append whole lines under an exclusive lock (partitions and prompt shards may run at once,
    on one node or several sharing the folder over a filesystem with working locks, e.g. NFSv4);
    a torn last line left by a crash is cut first; the write is flushed and fsync'd before the
    lock is released. With `unique_key`, rows whose key is already in the file are dropped, under
    the same lock, so two runs of one shard at once (a redelivered task beside its rerun) still
    record each image once. Returns how many rows were written."""
    if not rows:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            _cut_torn_line(f)
            if unique_key is not None:  # the only reason to read the rows already written
                f.seek(0)
                present = {r.get(unique_key) for r in _rows_of(f.read().splitlines())}
                rows = [r for r in rows if r[unique_key] not in present]
            data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
            f.seek(0, os.SEEK_END)
            f.write(data.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
    return len(rows)


_TAIL_BLOCK = 1 << 16


def _cut_torn_line(f) -> None:
    """Truncate a last line that has no newline (a crash mid-write), reading the file backwards
    from its end block by block: an append must not read the whole file, which grows to hundreds
    of MB over a paper-scale run."""
    end = f.seek(0, os.SEEK_END)
    position = end
    while position > 0:
        start = max(0, position - _TAIL_BLOCK)
        f.seek(start)
        block = f.read(position - start)
        newline = block.rfind(b"\n")
        if newline >= 0:
            cut = start + newline + 1
            break
        position = start
    else:
        cut = 0
    if cut < end:
        f.truncate(cut)


def _rows_of(lines: Iterable[str | bytes]) -> Iterator[dict]:
    """The rows of complete JSONL lines; blank and unparseable lines are skipped."""
    for line in lines:
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            yield row
