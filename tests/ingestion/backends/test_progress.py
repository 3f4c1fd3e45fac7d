"""How far a long run has got (issue 25; `ingestion.backends.drivers.progress`): the drivers
report (done, total, unit) as their rows land, a terminal shows a live bar with the count and the
time elapsed and left, anything else gets a few plain lines and the final count, never a redrawn
frame; the Dagster assets' lines and `qct2i evaluate`'s bar are tested beside them
(tests/dagster_defs/test_generation.py, tests/qct2i/test_evaluate.py).

The runs are driven by fakes (no model): a generator that paints squares, the recording judge
and reader (recording_models.py); the reporters by loops with a clock of their own."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from pathlib import Path

from PIL import Image

from ingestion.backends.api.generators import GeneratorSpec
from ingestion.backends.api.interfaces import GeneratedBatch, GenerationRequest, ImageGenerator
from ingestion.backends.drivers.progress import (
    CountLines,
    TerminalBar,
    clock,
    for_stream,
    watching,
    with_watchers,
)
from ingestion.backends.drivers.runs import run_adjudication, run_generation
from ingestion.backends.drivers.transcription_runs import run_transcription
from tests.helpers import pseudo_terminal
from tests.ingestion.backends.recording_models import RecordingJudge, RecordingReader


class Recorder:
    def __init__(self):
        self.calls: list[tuple] = []

    def __call__(self, done: int, total: int, unit: str, detail: str = "") -> None:
        self.calls.append((done, total, unit, detail))


class FakeClock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def fake_run(report, total: int, unit: str = "images drawn", start: int = 0, detail=None):
    for done in range(start, total + 1):
        report(done, total, unit, detail(done) if detail else "")


# -- the reporters ----------------------------------------------------------------------------


def test_a_terminal_sees_a_live_bar_with_the_count_elapsed_and_remaining():
    with pseudo_terminal() as (terminal, shown), os.fdopen(os.dup(terminal), "w") as stream:
        bar = for_stream(stream, "tiny-new")
        assert isinstance(bar, TerminalBar)
        fake_run(bar, 12)
        fake_run(bar, 5, "images judged", detail=lambda n: f"{3 * n} questions judged")
    text = b"".join(shown).decode()
    assert "tiny-new images drawn: 0/12 |" in text  # the first frame, before anything landed
    assert "tiny-new images drawn: 12/12 |" in text and "| 100% [" in text
    assert "tiny-new images judged: 5/5 |" in text and "15 questions judged]" in text
    assert "\r" in text.replace("\r\n", "")  # frames redrawn in place
    final = text.split("images drawn: 12/12")[1].split("\r\n")[0]
    assert "[00:00<00:00" in final  # elapsed < remaining, tqdm's way


def test_off_a_terminal_the_lines_are_plain_and_end_with_the_final_count():
    read, write = os.pipe()
    with os.fdopen(write, "w") as stream:
        lines = for_stream(stream, "tiny-new")
        assert isinstance(lines, CountLines)
        fake_run(lines, 40)
    with os.fdopen(read) as pipe:
        text = pipe.read()
    assert "\r" not in text
    written = text.splitlines()
    assert written[0] == "tiny-new: 0 of 40 images drawn (0:00 elapsed)"
    assert written[-1] == "tiny-new: 40 of 40 images drawn (0:00 elapsed)"
    assert len(written) <= 12  # the first, one per tenth, the last


def test_the_lines_come_once_a_tenth_or_once_half_a_minute_with_the_time_left():
    now = FakeClock()
    written: list[str] = []
    lines = CountLines(written.append, now=now)
    for done in range(101):  # fast: a second an image, so the tenths decide
        lines(done, 100, "images drawn")
        now.t += 1
    assert written[1] == "10 of 100 images drawn (0:10 elapsed, about 1:30 left)"
    assert len(written) == 11 and written[-1] == "100 of 100 images drawn (1:40 elapsed)"

    written.clear()
    for done in range(101):  # slow: a minute an image, so every half minute's count shows
        lines(done, 100, "images judged", f"{done * 4} questions judged")
        now.t += 60
    assert written[0] == "0 of 100 images judged, 0 questions judged (0:00 elapsed)"
    assert (
        written[1]
        == "1 of 100 images judged, 4 questions judged (1:00 elapsed, about 1:39:00 left)"
    )
    assert len(written) == 101


def test_a_resumed_run_starts_at_what_it_skipped_and_times_only_what_it_does():
    now = FakeClock()
    written: list[str] = []
    lines = CountLines(written.append, "tiny-new", now=now)
    for done in range(60, 101, 10):
        lines(done, 100, "images drawn")
        now.t += 20
    assert written == [
        "tiny-new: 60 of 100 images drawn (0:00 elapsed)",
        "tiny-new: 70 of 100 images drawn (0:20 elapsed, about 1:00 left)",
        "tiny-new: 80 of 100 images drawn (0:40 elapsed, about 0:40 left)",
        "tiny-new: 90 of 100 images drawn (1:00 elapsed, about 0:20 left)",
        "tiny-new: 100 of 100 images drawn (1:20 elapsed)",
    ]


def test_clock():
    assert [clock(s) for s in (0, 5.4, 754, 3723)] == ["0:00", "0:05", "12:34", "1:02:03"]


def test_watchers_hear_the_counts_only_while_they_watch_and_are_closed_after():
    own, watcher = Recorder(), Recorder()
    closed = []
    watcher.close = lambda: closed.append(True)
    report = with_watchers(own)
    report(0, 2, "images read")
    with watching(watcher):
        report(1, 2, "images read")
    report(2, 2, "images read")
    assert own.calls == [(n, 2, "images read", "") for n in range(3)]
    assert watcher.calls == [(1, 2, "images read", "")] and closed == [True]


# -- the drivers ------------------------------------------------------------------------------


class PaintingGenerator(ImageGenerator):
    """Paints each request a square of its size; no model."""

    backend = "fake"

    def generate(self, requests: Sequence[GenerationRequest]) -> GeneratedBatch:
        images = tuple(Image.new("RGB", (r.width, r.height), (9, 9, 9)) for r in requests)
        return GeneratedBatch(tuple(requests), images, 0.01 * len(requests), 0, "cpu", "r1")


def _prompts(n: int) -> list[dict]:
    return [
        {"prompt_id": f"p{i}", "concept_id": f"c{i}", "language": "en", "text": f"a cat {i}"}
        for i in range(1, n + 1)
    ]


def _draw(bundle: Path, n: int, **kwargs) -> None:
    spec = GeneratorSpec("lens", "fake", "FakePipeline", 2, 1.0, 8, 8, 0)
    run_generation(spec, _prompts(n), PaintingGenerator(), bundle, batch_size=2, **kwargs)


def test_generation_reports_the_images_drawn_of_the_planned_batch_by_batch(tmp_path):
    seen, again = Recorder(), Recorder()
    _draw(tmp_path, 5, log=lambda _: None, progress=seen)
    assert seen.calls == [(n, 5, "images drawn", "") for n in (0, 2, 4, 5)]
    _draw(tmp_path, 5, log=lambda _: None, progress=again)  # a rerun: everything was done
    assert again.calls == [(5, 5, "images drawn", "")]
    logged: list[str] = []  # no progress given: plain count lines through `log`
    _draw(tmp_path, 6, log=logged.append)
    assert logged[:3] == [
        "lens: 6 images planned, 5 already done",
        "lens: 5 of 6 images drawn (0:00 elapsed)",
        "lens: 6 of 6 images drawn (0:00 elapsed)",
    ]
    assert logged[3].startswith("lens: 1 drawn in ") and len(logged) == 4


def _judged_bundle(tmp_path: Path, n: int) -> Path:
    (tmp_path / "images").mkdir()
    images, questions = [], []
    for i in range(1, n + 1):
        (tmp_path / f"images/p{i}.png").write_bytes(b"png")
        images.append({"prompt_id": f"p{i}", "model_id": "lens", "path": f"images/p{i}.png"})
        questions += [
            {"prompt_id": f"p{i}", "question_id": f"q{k}", "text": "?", "text_target": "hi"}
            for k in (1, 2)
        ]
    for name, rows in (("images", images), ("questions", questions)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_judging_reports_the_images_judged_with_the_questions_chunk_by_chunk(tmp_path):
    bundle, seen = _judged_bundle(tmp_path, 3), Recorder()
    run_adjudication(
        RecordingJudge(), bundle, "lens", log=lambda _: None, chunk_images=2, progress=seen
    )
    assert seen.calls == [
        (0, 3, "images judged", "0 questions judged"),
        (2, 3, "images judged", "4 questions judged"),
        (3, 3, "images judged", "6 questions judged"),
    ]
    logged: list[str] = []
    run_adjudication(RecordingJudge(), bundle, "lens", log=logged.append)
    assert logged == ["lens: 3 of 3 images judged, 0 questions judged (0:00 elapsed)"]


def test_transcription_reports_the_images_read_one_by_one(tmp_path):
    bundle, seen = _judged_bundle(tmp_path, 3), Recorder()
    run_transcription(RecordingReader(), bundle, "lens", log=lambda _: None, progress=seen)
    assert seen.calls == [(n, 3, "images read", "") for n in range(4)]


def test_plain_lines_go_to_a_stream_that_is_not_a_terminal_flushed():
    stream = io.StringIO()
    lines = for_stream(stream)
    lines(1, 2, "images read")
    assert stream.getvalue() == "1 of 2 images read (0:00 elapsed)\n"
