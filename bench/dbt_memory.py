"""Which dbt models hold the memory: the dbt process's resident memory sampled while it builds,
then attributed to the nodes that were executing at each sample (`make bench-scale`).

dbt runs the Python models inside its own process, next to DuckDB's buffer pool, so the process
RSS is the figure the memory bound is about. dbt runs two nodes at a time (profiles.yml
`threads: 2`): a sample taken while two nodes ran counts for both, and a node's figure is the
highest RSS seen while it executed. `rise_mb` is that peak less the RSS at the node's start: the
memory the node itself added (an upper bound when another node ran beside it).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import psutil

SAMPLE_EVERY_S = 0.2


@dataclass
class RssSamples:
    """(unix time, RSS in MB) of every child process whose command line names `dbt`."""

    points: list[tuple[float, float]] = field(default_factory=list)

    def peak_mb(self) -> float:
        return max((rss for _, rss in self.points), default=0.0)

    def between(self, start: float, end: float) -> list[float]:
        return [rss for t, rss in self.points if start <= t <= end]

    def at(self, when: float) -> float:
        """The last sample at or before `when` (0 before the first)."""
        before = [rss for t, rss in self.points if t <= when]
        return before[-1] if before else 0.0


def _dbt_children() -> Iterator[psutil.Process]:
    for child in psutil.Process().children(recursive=True):
        try:
            if any(Path(part).name == "dbt" for part in child.cmdline()[:2]):
                yield child
        except psutil.Error:  # it exited between the listing and the look
            continue


@contextmanager
def sampling_dbt_rss(every_s: float = SAMPLE_EVERY_S) -> Iterator[RssSamples]:
    """Sample the RSS of this process's dbt children in a thread for the duration of the block."""
    samples, stop = RssSamples(), threading.Event()

    def sample() -> None:
        while not stop.is_set():
            total = 0
            for child in _dbt_children():
                try:
                    total += child.memory_info().rss
                except psutil.Error:
                    continue
            if total:
                samples.points.append((time.time(), total / 2**20))
            stop.wait(every_s)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join()


def _unix(timestamp: str) -> float:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()


def node_windows(run_results: Path) -> list[tuple[str, float, float]]:
    """(node, start, end) of each node's execute step, from dbt's run_results.json."""
    windows = []
    for result in json.loads(run_results.read_text())["results"]:
        for step in result.get("timing", []):
            if step["name"] == "execute" and step.get("started_at") and step.get("completed_at"):
                name = result["unique_id"].split(".", 2)[-1]
                windows.append((name, _unix(step["started_at"]), _unix(step["completed_at"])))
    return windows


def node_peaks(samples: RssSamples, run_results: Path, top: int = 12) -> list[dict]:
    """The `top` nodes by the highest RSS sampled while they executed."""
    rows = []
    for name, start, end in node_windows(run_results):
        during = samples.between(start, end)
        peak = max(during, default=samples.at(end))
        rows.append(
            {
                "node": name,
                "peak_rss_mb": round(peak),
                "rise_mb": round(peak - samples.at(start)),
                "seconds": round(end - start, 1),
            }
        )
    rows.sort(key=lambda row: -row["peak_rss_mb"])
    return rows[:top]


def measured(build: Callable[[], float], target: Path) -> tuple[float, list[dict], float]:
    """Run `build` (a dbt build writing `target`/run_results.json) while sampling: its result,
    the nodes by peak, and the sampled peak RSS in MB. The samples are kept in
    `target`/rss_samples.json for a closer look."""
    with sampling_dbt_rss() as samples:
        seconds = build()
    (target / "rss_samples.json").write_text(json.dumps(samples.points))
    return seconds, node_peaks(samples, target / "run_results.json"), round(samples.peak_mb())
