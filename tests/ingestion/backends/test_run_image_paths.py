"""Image paths stay inside the judging and transcription runs too: they read images.jsonl straight
from the bundle folder and open each image at `bundle / path`, so before anything is judged or
read, every row whose path resolves (symbolic links followed) outside the bundle folder and the
named image roots refuses the bundle with file, line and reason, in the import's words
(`ingestion.bundle.image_paths`, one home of the rule), and nothing is written.

The judge and the reader are recording fakes (tests/ingestion/backends/recording_models.py, no
model): the check runs before either is asked anything. Each test lays out `bundle/` and
`elsewhere/secret.png` under a resolved tmp_path (the messages show resolved paths). Expected
messages are written out by hand.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from ingestion.backends.drivers.runs import read_rows, run_adjudication
from ingestion.backends.drivers.transcription_runs import run_transcription
from ingestion.bundle import BundleError, Problem, read_bundle
from tests.ingestion.backends.recording_models import RecordingJudge, RecordingReader
from tests.worlds.good_bundle import TAXONOMY, good, write

HINT = " (name its folder with --image-root DIR to allow it)"


@pytest.fixture
def place(tmp_path) -> Path:
    root = tmp_path.resolve()
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "secret.png").write_bytes(b"not an image of the bundle")
    return root


def gpu_bundle(place: Path, paths: list[str]) -> Path:
    """A GPU bundle of generator `lens`: image p<i> (line i of images.jsonl) at paths[i - 1],
    its file written where that is `images/p<i>.png`; one question with a text target a prompt."""
    bundle = place / "bundle"
    (bundle / "images").mkdir(parents=True)
    images, questions = [], []
    for i, path in enumerate(paths, 1):
        if path == f"images/p{i}.png":
            (bundle / path).write_bytes(b"png")
        images.append({"prompt_id": f"p{i}", "model_id": "lens", "path": path})
        questions.append(
            {"prompt_id": f"p{i}", "question_id": "q1", "text": "a sign?", "text_target": "hi"}
        )
    for name, rows in (("images", images), ("questions", questions)):
        (bundle / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return bundle


def judge_refusal(bundle: Path, **kwargs) -> tuple[list[Problem], RecordingJudge]:
    judge = RecordingJudge()
    with pytest.raises(BundleError) as refused:
        run_adjudication(judge, bundle, "lens", log=lambda _: None, chunk_images=2, **kwargs)
    return refused.value.problems, judge


def read_refusal(bundle: Path, **kwargs) -> tuple[list[Problem], RecordingReader]:
    reader = RecordingReader()
    with pytest.raises(BundleError) as refused:
        run_transcription(reader, bundle, "lens", log=lambda _: None, **kwargs)
    return refused.value.problems, reader


# ------------------------------------------------------------------------------------------------
# Refused before anything is judged or read
# ------------------------------------------------------------------------------------------------


def test_a_path_climbing_out_refuses_judging_before_any_image_is_judged(place):
    (place / "outside.png").write_bytes(b"not the bundle's")
    bundle = gpu_bundle(place, ["images/p1.png", "../outside.png", "images/p3.png"])

    problems, judge = judge_refusal(bundle)

    assert problems == [
        Problem(
            "images.jsonl",
            2,
            f'path "../outside.png" resolves outside the bundle folder, to "{place}/outside.png"'
            + HINT,
        )
    ]
    assert judge.opened == []  # not even the images inside, judged before line 2 in file order
    assert not (bundle / "judgments.jsonl").exists()


def test_the_refusal_reads_as_the_imports_message(place):
    bundle = gpu_bundle(place, ["images/p1.png", "../outside.png"])
    judge = RecordingJudge()

    with pytest.raises(BundleError) as refused:
        run_adjudication(judge, bundle, "lens", log=lambda _: None)

    assert str(refused.value) == (
        f"bundle {bundle} refused (1 problems):\n"
        f'images.jsonl:2: path "../outside.png" resolves outside the bundle folder, to '
        f'"{place}/outside.png" (name its folder with --image-root DIR to allow it)'
    )


def test_a_symbolic_link_out_refuses_judging_and_transcription(place):
    bundle = gpu_bundle(place, ["images/p1.png", "images/p2.png"])
    (bundle / "images" / "p2.png").unlink()
    (bundle / "images" / "p2.png").symlink_to(place / "elsewhere" / "secret.png")
    expected = [
        Problem(
            "images.jsonl",
            2,
            'path "images/p2.png" resolves outside the bundle folder through a symbolic link, '
            f'to "{place}/elsewhere/secret.png"' + HINT,
        )
    ]

    problems, judge = judge_refusal(bundle)
    assert problems == expected and judge.opened == []
    assert not (bundle / "judgments.jsonl").exists()

    problems, reader = read_refusal(bundle)
    assert problems == expected and reader.opened == []
    assert not (bundle / "transcriptions.jsonl").exists()


def test_every_escaping_row_is_listed_with_its_line_blank_and_torn_lines_counted(place):
    secret = f"{place}/elsewhere/secret.png"
    bundle = gpu_bundle(place, ["images/p1.png", secret, "images/../../outside.png"])
    lines = (bundle / "images.jsonl").read_text().splitlines(keepends=True)
    # a blank line the run skips still counts, as the import counts it
    (bundle / "images.jsonl").write_text("".join([lines[0], "\n", *lines[1:]]))

    problems, reader = read_refusal(bundle)

    assert problems == [
        Problem("images.jsonl", 3, f'path "{secret}" resolves outside the bundle folder' + HINT),
        Problem(
            "images.jsonl",
            4,
            'path "images/../../outside.png" resolves outside the bundle folder, to '
            f'"{place}/outside.png"' + HINT,
        ),
    ]
    assert reader.opened == [] and not (bundle / "transcriptions.jsonl").exists()


def test_another_generators_row_outside_refuses_the_run_as_the_import_refuses_the_bundle(place):
    bundle = gpu_bundle(place, ["images/p1.png"])
    other = {"prompt_id": "p1", "model_id": "other", "path": "../outside.png"}
    with (bundle / "images.jsonl").open("a") as rows:
        rows.write(json.dumps(other) + "\n")

    problems, judge = judge_refusal(bundle)

    assert [(p.file, p.line) for p in problems] == [("images.jsonl", 2)]
    assert judge.opened == [] and not (bundle / "judgments.jsonl").exists()


def test_a_rerun_with_judgments_already_written_adds_nothing(place):
    bundle = gpu_bundle(place, ["images/p1.png"])
    run_adjudication(RecordingJudge(), bundle, "lens", log=lambda _: None)
    before = (bundle / "judgments.jsonl").read_bytes()
    with (bundle / "images.jsonl").open("a") as rows:
        rows.write(json.dumps({"prompt_id": "p2", "model_id": "lens", "path": "/etc/passwd"}))
        rows.write("\n")
    (bundle / "questions.jsonl").write_text(
        (bundle / "questions.jsonl").read_text()
        + json.dumps({"prompt_id": "p2", "question_id": "q1", "text": "?"})
        + "\n"
    )

    problems, judge = judge_refusal(bundle)

    assert problems == [
        Problem("images.jsonl", 2, 'path "/etc/passwd" resolves outside the bundle folder' + HINT)
    ]
    assert judge.opened == [] and (bundle / "judgments.jsonl").read_bytes() == before


def test_the_run_refuses_what_the_import_refuses_in_the_same_words(place):
    """GOOD of the bundle tests with image i1 (line 1) climbing out: the run's problems are the
    import's, and the bundle's judgments are left as they were."""
    tables = good()
    tables["images"][0]["path"] = "../outside.png"
    bundle = write(place / "bundle", tables)
    with pytest.raises(BundleError) as imported:
        read_bundle(bundle, TAXONOMY)
    judgments = (bundle / "judgments.jsonl").read_bytes()

    problems, judge = judge_refusal(bundle)

    assert problems == imported.value.problems
    assert judge.opened == [] and (bundle / "judgments.jsonl").read_bytes() == judgments


# ------------------------------------------------------------------------------------------------
# Accepted: paths inside the bundle folder, or inside a named image root
# ------------------------------------------------------------------------------------------------


def test_a_bundle_whose_paths_stay_inside_is_judged_and_read_as_before(place):
    bundle = gpu_bundle(place, ["images/p1.png", "images/p2.png", "images/missing/p3.png"])
    (bundle / "images" / "p2.png").unlink()
    (bundle / "images" / "p2.png").symlink_to(bundle / "images" / "p1.png")  # a link inside
    judge, reader = RecordingJudge(), RecordingReader()

    stats = run_adjudication(judge, bundle, "lens", log=lambda _: None, chunk_images=2)
    read = run_transcription(reader, bundle, "lens", log=lambda _: None)

    # the link is opened at its target, as the check resolved it (the judge follows no link)
    opened = [str(bundle / f) for f in ("images/p1.png", "images/p1.png", "images/missing/p3.png")]
    assert judge.opened == opened and reader.opened == opened
    assert (stats.done, stats.questions, read.done) == (3, 3, 3)
    assert [r["prompt_id"] for r in read_rows(bundle / "judgments.jsonl")] == ["p1", "p2", "p3"]
    assert len(list(read_rows(bundle / "transcriptions.jsonl"))) == 3


def test_an_image_root_lets_its_paths_through_and_only_those(place):
    secret = f"{place}/elsewhere/secret.png"
    bundle = gpu_bundle(place, ["images/p1.png", secret])
    judge = RecordingJudge()

    run_adjudication(judge, bundle, "lens", log=lambda _: None, image_roots=[place / "elsewhere"])

    assert judge.opened == [str(bundle / "images/p1.png"), secret]
    (place / "other").mkdir()
    problems, _ = read_refusal(bundle, image_roots=[place / "other"])
    assert problems == [
        Problem(
            "images.jsonl",
            2,
            f'path "{secret}" resolves outside the bundle folder and the image roots',
        )
    ]


def test_an_image_root_that_is_not_a_folder_is_refused_on_its_own(place):
    bundle = gpu_bundle(place, ["images/p1.png"])

    problems, judge = judge_refusal(bundle, image_roots=[place / "imgz"])

    assert problems == [
        Problem("(command line)", None, f'image root "{place}/imgz" is not a folder')
    ]
    assert judge.opened == [] and not (bundle / "judgments.jsonl").exists()


def test_the_judge_reads_the_checked_file_and_refuses_a_link_put_in_its_place(place):
    """Guards against reopening a checked path through a link (issue 32): the run hands the
    judge the file its check resolved, and `load_rgb` opens it once without following a link,
    so an image swapped for a link to a file outside after the check is refused, not read."""
    from PIL import Image

    from ingestion.backends.models.images import load_rgb

    bundle = gpu_bundle(place, ["images/p1.png"])
    Image.new("RGB", (4, 4), "red").save(bundle / "images" / "p1.png")
    judge = RecordingJudge()
    run_adjudication(judge, bundle, "lens", log=lambda _: None)
    [checked] = judge.opened
    assert load_rgb(checked).getpixel((0, 0)) == (255, 0, 0)

    Image.new("RGB", (4, 4), "blue").save(place / "elsewhere" / "blue.png")
    os.unlink(checked)
    os.symlink(place / "elsewhere" / "blue.png", checked)

    with pytest.raises(OSError) as refused:
        load_rgb(checked)
    assert refused.value.errno == errno.ELOOP
