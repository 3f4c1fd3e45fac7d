"""How far a long driver run has got (issue 25): the one home of the progress callback the runs
report to, and of the two ways it is shown.

A driver (`runs.run_generation`, `runs.run_adjudication`,
`transcription_runs.run_transcription`) calls `progress(done, total, unit, detail)` once before
its first item and again as items land: `done` counts what the bundle holds of `total` (a rerun
starts at what it skipped), `unit` says what is counted ("images drawn", "images judged",
"images read"), `detail` adds a second count ("42 questions judged"). What is shown:

- `CountLines`: plain lines through a `write` callable, the first count, then at most one per
  tenth of the total or per half minute, and the final count, with the time elapsed and an
  estimate of what is left; the Dagster assets write them with `context.log.info` (so a run's
  logs carry the counts), and `qct2i evaluate` writes them to stderr when it is not a terminal;
- `TerminalBar`: a live tqdm bar (count, elapsed, remaining) on a terminal, redrawn in place.

`for_stream` picks one for a stream. This layer knows no Dagster: `qct2i evaluate` runs the
assets in its own process, so it hands its reporter to them through `watching`, and the assets
report to `with_watchers(CountLines(...))`, their own lines plus whoever watches this process.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol, TextIO


class Progress(Protocol):
    def __call__(self, done: int, total: int, unit: str, detail: str = "") -> None: ...


def no_progress(done: int, total: int, unit: str, detail: str = "") -> None:
    """A run nobody watches."""


def clock(seconds: float) -> str:
    """0:05, 12:34, 1:02:03."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class CountLines:
    """Plain progress lines through `write`: the first count, at most one more per `step` of the
    total or per `every_s` seconds, and the final count (done == total) always, e.g.
    `tiny-new: 3 of 10 images drawn (0:05 elapsed, about 0:12 left)`. A new unit or a smaller
    count starts a new run of lines."""

    def __init__(
        self,
        write: Callable[[str], None],
        label: str = "",
        step: float = 0.1,
        every_s: float = 30.0,
        now: Callable[[], float] = time.monotonic,
    ):
        self.write, self.label, self.step, self.every_s, self.now = write, label, step, every_s, now
        self._unit: str | None = None
        self._started = self._first = self._last_n = self._last_at = 0
        self._next_n = 0.0

    def __call__(self, done: int, total: int, unit: str, detail: str = "") -> None:
        at = self.now()
        if unit != self._unit or done < self._last_n:
            self._unit, self._started, self._first = unit, at, done
        elif done < total and done < self._next_n and at - self._last_at < self.every_s:
            return
        self._last_n, self._last_at = done, at
        self._next_n = done + max(1.0, self.step * total)
        self.write(self.line(done, total, unit, detail, at - self._started))

    def line(self, done: int, total: int, unit: str, detail: str, elapsed: float) -> str:
        counted = f"{done} of {total} {unit}" + (f", {detail}" if detail else "")
        timing = f"{clock(elapsed)} elapsed"
        new = done - self._first
        if new > 0 and done < total and elapsed > 0:
            timing += f", about {clock((total - done) * elapsed / new)} left"
        return f"{self.label + ': ' if self.label else ''}{counted} ({timing})"

    def close(self) -> None:
        pass


class TerminalBar:
    """A live tqdm bar on a terminal stream: `label unit: 3/10 |███   | 30% [00:05<00:12,
    detail]`, redrawn in place; a new unit (or a smaller count) closes the bar and starts
    another, the final count (done == total) closes it."""

    FORMAT = (
        "{desc}: {n_fmt}/{total_fmt} |{bar}| {percentage:3.0f}% [{elapsed}<{remaining}{postfix}]"
    )

    def __init__(self, stream: TextIO, label: str = ""):
        self.stream, self.label = stream, label
        self._bar = None
        self._unit: str | None = None

    def __call__(self, done: int, total: int, unit: str, detail: str = "") -> None:
        from tqdm import tqdm

        bar = self._bar
        if bar is None or unit != self._unit or total != bar.total or done < bar.n:
            self.close()
            desc = f"{self.label} {unit}" if self.label else unit
            bar = self._bar = tqdm(
                total=total,
                initial=done,
                desc=desc,
                file=self.stream,
                bar_format=self.FORMAT,
                dynamic_ncols=True,
                mininterval=0.5,
                postfix=detail or None,
            )
            self._unit = unit
        elif detail:
            bar.set_postfix_str(detail, refresh=False)
        bar.update(done - bar.n)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def for_stream(stream: TextIO, label: str = "") -> CountLines | TerminalBar:
    """A live bar when `stream` is a terminal, else plain lines written (and flushed) to it."""
    if stream.isatty():
        return TerminalBar(stream, label)

    def write(line: str) -> None:
        print(line, file=stream, flush=True)

    return CountLines(write, label)


_WATCHERS: list[Progress] = []  # this process's, while `watching`


@contextmanager
def watching(reporter: Progress) -> Iterator[Progress]:
    """Every `with_watchers` callback of this process also reports to `reporter` meanwhile (how
    `qct2i evaluate` sees the assets it materialises in-process); a reporter with `close` is
    closed on the way out."""
    _WATCHERS.append(reporter)
    try:
        yield reporter
    finally:
        _WATCHERS.remove(reporter)
        close = getattr(reporter, "close", None)
        if close is not None:
            close()


def with_watchers(reporter: Progress) -> Progress:
    """`reporter`, and whoever is `watching` this process when a count comes."""

    def report(done: int, total: int, unit: str, detail: str = "") -> None:
        reporter(done, total, unit, detail)
        for watcher in list(_WATCHERS):
            watcher(done, total, unit, detail)

    return report


__all__ = [
    "CountLines",
    "Progress",
    "TerminalBar",
    "clock",
    "for_stream",
    "no_progress",
    "watching",
    "with_watchers",
]
