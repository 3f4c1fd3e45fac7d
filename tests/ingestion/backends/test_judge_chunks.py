"""Judging in chunks of images: one `judge_many` call and one append per chunk, so a crash loses
at most the chunk in flight and a rerun judges exactly what is missing.

The crashes are real: an image file that is not an image (a generator killed while writing it by
hand, a disk error) makes PIL raise inside the judge in the middle of a chunk; and a judge process
killed with SIGKILL while a chunk is in flight. The judge is
the tiny Qwen3-VL of tests/conftest.py; the vLLM judge's chunked generate() is tested in
test_vllm.py (`make test-vllm`).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image, UnidentifiedImageError

from ingestion.backends.api.interfaces import ImageQuestions
from ingestion.backends.drivers.runs import read_rows, run_adjudication
from ingestion.backends.models.transformers_vl import TransformersJudge

N_IMAGES, CHUNK, BROKEN = 5, 2, 3  # chunks [p0 p1] [p2 p3] [p4]; p3 breaks the second chunk
QUESTIONS = (("q1", "Is there a cat?"), ("q2", "Is the cat red?"))


@pytest.fixture(scope="module")
def judge(tiny_vl):
    return TransformersJudge(str(tiny_vl), model_name="tiny", device="cpu")


def _image(path: Path, i: int) -> None:
    Image.new("RGB", (32, 32), (50 * i, 90, 200)).save(path)


@pytest.fixture
def bundle(tmp_path) -> Path:
    (tmp_path / "images").mkdir()
    images, questions = [], []
    for i in range(N_IMAGES):
        path = tmp_path / "images" / f"p{i}.png"
        if i == BROKEN:
            path.write_bytes(b"not a png")
        else:
            _image(path, i)
        images.append({"prompt_id": f"p{i}", "model_id": "lens", "path": f"images/p{i}.png"})
        questions += [{"prompt_id": f"p{i}", "question_id": q, "text": t} for q, t in QUESTIONS]
    for name, rows in (("images", images), ("questions", questions)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def _run(judge, bundle):
    return run_adjudication(judge, bundle, "lens", log=lambda _: None, chunk_images=CHUNK)


def _answered(bundle: Path) -> Counter:
    return Counter(r["prompt_id"] for r in read_rows(bundle / "judgments.jsonl"))


def test_a_crash_mid_chunk_loses_that_chunk_only_and_the_rerun_judges_the_rest(judge, bundle):
    calls = []
    real = judge.judge_many

    def spy(items, images=None):
        calls.append([i.prompt_id for i in items])
        return real(items, images)

    judge.judge_many = spy
    try:
        with pytest.raises(UnidentifiedImageError):
            _run(judge, bundle)
        # p3 is unreadable: its chunk fails when its images are read (ahead, while the first
        # chunk was judged), so p2 is never judged; only the first chunk's answers were appended
        assert calls == [["p0", "p1"]]
        assert _answered(bundle) == {"p0": 2, "p1": 2}

        _image(bundle / "images" / f"p{BROKEN}.png", BROKEN)  # the image is redrawn
        calls.clear()
        stats = _run(judge, bundle)
    finally:
        del judge.judge_many
    assert calls == [["p2", "p3"], ["p4"]]
    assert (stats.done, stats.skipped, stats.questions) == (3, 2, 6)
    assert _answered(bundle) == {f"p{i}": 2 for i in range(N_IMAGES)}  # each answer once
    rows = list(read_rows(bundle / "judgments.jsonl"))
    assert {r["judge_id"] for r in rows} == {"default"}
    assert {r["judge_model"] for r in rows} == {"tiny"}


def test_the_next_chunks_images_are_read_while_this_chunk_is_judged(judge, bundle):
    """The first chunk's judging waits until the second chunk's images are being read, which a
    run that reads a chunk's images only when its turn comes would never do (the wait would
    time out); every chunk is judged with the images read for it, and gives the answers the
    judge gives reading the file itself."""
    _image(bundle / "images" / f"p{BROKEN}.png", BROKEN)
    second_read, events = threading.Event(), []
    real_load, real_judge = judge.load_images, judge.judge_many

    def load_images(items):
        events.append(("read", [i.prompt_id for i in items]))
        if items[0].prompt_id == "p2":
            second_read.set()
        return real_load(items)

    def judge_many(items, images=None):
        if items[0].prompt_id == "p0":
            assert second_read.wait(30), "the second chunk was not read during the first"
        assert [image.size for image in images] == [(32, 32)] * len(items)
        events.append(("judge", [i.prompt_id for i in items]))
        return real_judge(items, images)

    judge.load_images, judge.judge_many = load_images, judge_many
    try:
        stats = _run(judge, bundle)
    finally:
        del judge.load_images, judge.judge_many
    chunks = [["p0", "p1"], ["p2", "p3"], ["p4"]]
    assert sorted(events) == sorted([("read", c) for c in chunks] + [("judge", c) for c in chunks])
    assert events.index(("read", chunks[1])) < events.index(("judge", chunks[0]))
    assert (stats.done, stats.questions) == (N_IMAGES, 2 * N_IMAGES)
    first = judge.judge(ImageQuestions("p0", "lens", str(bundle / "images" / "p0.png"), QUESTIONS))
    rows = [r for r in read_rows(bundle / "judgments.jsonl") if r["prompt_id"] == "p0"]
    assert [(r["answer"], r["p_yes"]) for r in rows] == [(j.answer, j.p_yes) for j in first]


def test_every_row_says_which_engine_and_device_judged_it(judge, bundle):
    _image(bundle / "images" / f"p{BROKEN}.png", BROKEN)
    _run(judge, bundle)
    rows = list(read_rows(bundle / "judgments.jsonl"))
    engines = {(r["judge_engine"], r["judge_engine_version"], r["judge_gpu_model"]) for r in rows}
    assert engines == {("transformers", importlib.metadata.version("transformers"), "cpu")}
    assert len(rows) == 2 * N_IMAGES


def test_an_append_cut_between_lines_is_finished_with_the_questions_it_lacks(judge, bundle):
    """A kill can cut a chunk's append (one write, not atomic) after some of its lines: the rerun
    asks the cut image only its unanswered questions, so none is lost or answered twice."""
    _image(bundle / "images" / f"p{BROKEN}.png", BROKEN)
    _run(judge, bundle)
    whole = (bundle / "judgments.jsonl").read_bytes()
    lines = whole.splitlines(keepends=True)
    assert len(lines) == 2 * N_IMAGES
    # chunk 1 ([p0 p1]) whole; of chunk 2 ([p2 p3]) p2's first answer and half of its second
    (bundle / "judgments.jsonl").write_bytes(b"".join(lines[:5]) + lines[5][:40])
    assert _answered(bundle) == {"p0": 2, "p1": 2, "p2": 1}

    calls = []
    real = judge.judge_many

    def spy(items, images=None):
        calls.append([(i.prompt_id, [q for q, _ in i.questions]) for i in items])
        return real(items, images)

    judge.judge_many = spy
    try:
        stats = _run(judge, bundle)
    finally:
        del judge.judge_many
    assert calls == [[("p2", ["q2"]), ("p3", ["q1", "q2"])], [("p4", ["q1", "q2"])]]
    assert (stats.done, stats.skipped, stats.questions) == (3, 2, 5)
    rows = list(read_rows(bundle / "judgments.jsonl"))
    keys = Counter((r["prompt_id"], r["question_id"]) for r in rows)
    assert keys == {(f"p{i}", q): 1 for i in range(N_IMAGES) for q, _ in QUESTIONS}


def test_chunk_size_must_be_positive(judge, bundle):
    with pytest.raises(ValueError, match="chunk_images must be at least 1"):
        run_adjudication(judge, bundle, "lens", log=lambda _: None, chunk_images=0)


_JUDGE_IN_A_CHILD = """
import sys
from ingestion.backends.drivers.runs import run_adjudication
from ingestion.backends.models.transformers_vl import TransformersJudge
judge = TransformersJudge(sys.argv[1], model_name="tiny", device="cpu")
run_adjudication(judge, sys.argv[2], "lens", log=print, chunk_images=int(sys.argv[3]))
"""


def test_a_judge_killed_mid_chunk_loses_at_most_that_chunk(tiny_vl, bundle):
    """kill -9 while the second chunk is in flight: its image p3 is a FIFO nobody writes, so the
    judge blocks opening it, after p2 was judged in memory and after chunk 1 was appended."""
    fifo = bundle / "images" / f"p{BROKEN}.png"
    fifo.unlink()
    os.mkfifo(fifo)
    child = subprocess.Popen(
        [sys.executable, "-c", _JUDGE_IN_A_CHILD, str(tiny_vl), str(bundle), str(CHUNK)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 300
    while _answered_if_any(bundle) != {"p0": 2, "p1": 2}:
        assert child.poll() is None, child.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "the first chunk never landed"
        time.sleep(0.2)
    time.sleep(1.0)  # the child moves on to chunk 2 and blocks on the FIFO
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert _answered(bundle) == {"p0": 2, "p1": 2}  # chunk 1 whole, chunk 2 lost, no torn line

    fifo.unlink()
    _image(fifo, BROKEN)
    rerun = subprocess.run(
        [sys.executable, "-c", _JUDGE_IN_A_CHILD, str(tiny_vl), str(bundle), str(CHUNK)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert _answered(bundle) == {f"p{i}": 2 for i in range(N_IMAGES)}  # each answer once


def _answered_if_any(bundle: Path) -> Counter:
    return _answered(bundle) if (bundle / "judgments.jsonl").exists() else Counter()
