"""The saved dbt parses of the project, one per warehouse setting, vars and profile: the one home
for how `qct2i build` (qct2i/dbt_runner.py) and Dagster's dbt asset (dagster_defs/assets/dbt.py)
keep dbt from parsing the whole project again.

dbt re-parses every file (seconds) when the command-line vars or the profile's connection settings
differ from those its `partial_parse.msgpack` was made with, and the DuckDB path is one of those
settings. A warehouse setting is a path as dbt sees it: the CLI's file name (dbt runs in the
warehouse's folder), Dagster's working copy by its absolute path. Each run's folder is seeded from
the entry of its setting before dbt starts, and the run's parse goes back to that entry (atomically)
after, so the next run with the same setting and vars parses only what changed. dbt checks a saved
parse itself, so a stale entry costs a full parse, never a wrong one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from ingestion.paths import PROJECT_ROOT

PARTIAL_PARSE = "partial_parse.msgpack"
PARTIAL_PARSE_CACHE = PROJECT_ROOT / "target" / "partial_parse"
# entries kept (1.6 MB each here): every run rewrites its own, so the oldest are those least
# recently used; the tests' temporary warehouses would otherwise add some with every test run
CACHE_ENTRIES_KEPT = 64


def cached_parse(warehouse_setting: str, args: Sequence[str], profiles_dir: Path) -> Path:
    """The cache entry of a parse made for this warehouse setting, the `--vars` in dbt's `args`
    (none: no vars) and this profiles folder."""
    args = list(args)
    cli_vars = args[args.index("--vars") + 1] if "--vars" in args[:-1] else ""
    key = "\0".join([warehouse_setting, cli_vars, str(profiles_dir)])
    return PARTIAL_PARSE_CACHE / f"{hashlib.sha256(key.encode()).hexdigest()[:20]}.msgpack"


@contextlib.contextmanager
def reused_parse(
    warehouse_setting: str, args: Sequence[str], profiles_dir: Path, target: Path
) -> Iterator[None]:
    """For one dbt call in `target`: seed it from the cache entry of this warehouse setting,
    vars and profile before, and save its parse back after, even when dbt failed (its parse is
    made before the first node runs)."""
    cached = cached_parse(warehouse_setting, args, profiles_dir)
    _seed_parse(cached, target)
    try:
        yield
    finally:
        _keep_parse(target, cached)


def _seed_parse(cached: Path, target: Path) -> None:
    """Put the cached parse, if any, where dbt reads its saved parse (`target`)."""
    target.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):  # none yet, or pruned by another run just now
        shutil.copyfile(cached, target / PARTIAL_PARSE)


def _keep_parse(target: Path, cached: Path) -> None:
    """Copy the run's parse into the cache through a temporary name, so a concurrent run reads
    the old entry or the new one, never half of one."""
    parsed = target / PARTIAL_PARSE
    if not parsed.exists():
        return
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(f"{cached.name}.{os.getpid()}.partial")
    shutil.copyfile(parsed, partial)
    os.replace(partial, cached)
    prune_cache(cached.parent, CACHE_ENTRIES_KEPT)


def prune_cache(cache: Path, kept: int) -> None:
    """Remove all but the `kept` most recently written entries (a run reading one that is removed
    meanwhile still reads it whole: the open file outlives its name)."""
    entries = []
    for entry in cache.glob("*.msgpack"):
        with contextlib.suppress(FileNotFoundError):  # removed by a run pruning at once
            entries.append((entry.stat().st_mtime, entry))
    for _, entry in sorted(entries, reverse=True)[kept:]:
        entry.unlink(missing_ok=True)
