"""An image folder drawn elsewhere (issue 25, `qct2i evaluate MODEL_ID --images DIR`): read and
checked as a whole, refused with every problem listed by file and reason, or put into a bundle
folder that the bundle reader accepts, once (a rerun adds nothing).

Each test lays out its folders under tmp_path (resolved: messages show resolved paths): `images/`
(the folder handed over, images written with PIL), `bundle/` (the prompts and questions of
tests/worlds/good_bundle.py: p1, p2, p3) and `outside/`. Expected rows and messages are written
out by hand.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from PIL import Image

from ingestion.bundle import BundleError, read_bundle
from ingestion.bundle.format import write_bundle
from ingestion.sources.image_folder import (
    FolderImage,
    ImageFolderError,
    add_folder_images,
    read_image_folder,
)
from tests.worlds.good_bundle import GOOD, TAXONOMY

PROMPTS = ("p1", "p2", "p3")


@pytest.fixture
def place(tmp_path) -> Path:
    root = tmp_path.resolve()
    for folder in ("images", "outside"):
        (root / folder).mkdir()
    write_bundle(root / "bundle", {name: GOOD[name] for name in ("prompts", "questions")})
    return root


def image_bytes(size: tuple[int, int], fmt: str, colour: str = "red") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, fmt)
    return out.getvalue()


def noise_jpeg(size: tuple[int, int]) -> bytes:
    """A JPEG whose scan is most of the file (noise does not compress)."""
    image = Image.frombytes(
        "RGB", size, bytes((i * 7919) % 251 for i in range(3 * size[0] * size[1]))
    )
    out = io.BytesIO()
    image.save(out, "JPEG", quality=95)
    return out.getvalue()


def write_meta(folder: Path, *lines) -> None:
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    (folder / "meta.jsonl").write_text(text, encoding="utf-8")


def good_folder(place: Path) -> Path:
    """p1 as PNG with its seed and size, p2 as JPEG without a seed (latency as an integer), p3
    as WebP with seed 0 on 8 GPUs; a .DS_Store and the inbox's READY marker beside them, both
    ignored (an images folder dropped into the inbox ends with READY: issue 33's daemon test
    found every such drop refused as "READY: not an image")."""
    folder = place / "images"
    (folder / "p1.png").write_bytes(image_bytes((64, 48), "PNG"))
    (folder / "p2.jpg").write_bytes(image_bytes((32, 32), "JPEG", "blue"))
    (folder / "p3.webp").write_bytes(image_bytes((40, 20), "WEBP", "green"))
    (folder / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    (folder / "READY").write_text("")
    write_meta(
        folder,
        {"prompt_id": "p1", "seed": 7, "width": 64, "height": 48, "latency_s": 2.5, "gpus": 1},
        {"prompt_id": "p2", "latency_s": 3, "gpus": 2},
        "",
        {"prompt_id": "p3", "seed": 0, "latency_s": 0.0, "gpus": 8},
    )
    return folder


def evaluate(folder: Path, bundle: Path, model_id: str = "mine") -> int:
    """What `qct2i evaluate` does with the folder: read and check it whole, then add it."""
    return add_folder_images(read_image_folder(folder, PROMPTS), model_id, bundle)


def images_rows(bundle: Path) -> list[dict]:
    return [json.loads(line) for line in (bundle / "images.jsonl").read_text().splitlines()]


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() for path in root.rglob("*") if path.is_file()
    }


EXPECTED_ROWS = [
    {
        "image_id": "mine__p1__s7",
        "prompt_id": "p1",
        "model_id": "mine",
        "width": 64,
        "height": 48,
        "latency_s": 2.5,
        "gpus": 1,
        "path": "images/mine/p1.png",
        "seed": 7,
        "backend": "image_folder",
        "source_file": "p1.png",
    },
    {
        "image_id": "mine__p2",
        "prompt_id": "p2",
        "model_id": "mine",
        "width": 32,
        "height": 32,
        "latency_s": 3.0,
        "gpus": 2,
        "path": "images/mine/p2.jpg",
        "seed": None,
        "backend": "image_folder",
        "source_file": "p2.jpg",
    },
    {
        "image_id": "mine__p3__s0",
        "prompt_id": "p3",
        "model_id": "mine",
        "width": 40,
        "height": 20,
        "latency_s": 0.0,
        "gpus": 8,
        "path": "images/mine/p3.webp",
        "seed": 0,
        "backend": "image_folder",
        "source_file": "p3.webp",
    },
]


def judged_yes() -> list[dict]:
    """What the judging asset adds next: the bundle reader needs judgments."""
    return [
        {"prompt_id": q["prompt_id"], "model_id": "mine", "question_id": q["question_id"]}
        | {"answer": "yes", "p_yes": 0.9}
        for q in GOOD["questions"]
    ]


def test_a_good_folder_is_read_with_the_sizes_of_its_files(place):
    folder = good_folder(place)

    assert read_image_folder(folder, PROMPTS) == [
        FolderImage("p1", folder / "p1.png", 64, 48, 2.5, 1, 7),
        FolderImage("p2", folder / "p2.jpg", 32, 32, 3.0, 2, None),
        FolderImage("p3", folder / "p3.webp", 40, 20, 0.0, 8, 0),
    ]


def test_a_good_folder_becomes_images_the_bundle_reader_accepts(place):
    folder, bundle = good_folder(place), place / "bundle"

    assert evaluate(folder, bundle) == 3

    assert images_rows(bundle) == EXPECTED_ROWS
    for row in EXPECTED_ROWS:
        copied = bundle / row["path"]
        assert not copied.is_symlink()
        assert copied.read_bytes() == (folder / row["source_file"]).read_bytes()
    write_bundle(bundle, {"judgments": judged_yes()})
    tables = read_bundle(bundle, TAXONOMY)
    images = tables["images"].select(["image_id", "width", "height", "latency_s", "gpus", "seed"])
    assert images.to_pylist() == [
        {
            "image_id": "mine__p1__s7",
            "width": 64,
            "height": 48,
            "latency_s": 2.5,
            "gpus": 1,
            "seed": 7,
        },
        {
            "image_id": "mine__p2",
            "width": 32,
            "height": 32,
            "latency_s": 3.0,
            "gpus": 2,
            "seed": None,
        },
        {
            "image_id": "mine__p3__s0",
            "width": 40,
            "height": 20,
            "latency_s": 0.0,
            "gpus": 8,
            "seed": 0,
        },
    ]
    assert tables["images"]["backend"].to_pylist() == ["image_folder"] * 3


def test_a_rerun_adds_nothing(place):
    folder, bundle = good_folder(place), place / "bundle"
    evaluate(folder, bundle)
    before = tree(bundle)

    assert evaluate(folder, bundle) == 0

    assert tree(bundle) == before


def test_a_rerun_after_a_lost_copy_copies_it_again_and_adds_no_row(place):
    folder, bundle = good_folder(place), place / "bundle"
    evaluate(folder, bundle)
    (bundle / "images" / "mine" / "p2.jpg").unlink()

    assert evaluate(folder, bundle) == 0

    assert (bundle / "images" / "mine" / "p2.jpg").read_bytes() == (folder / "p2.jpg").read_bytes()
    assert images_rows(bundle) == EXPECTED_ROWS


def bad_folder(place: Path) -> Path:
    """One folder with every kind of problem; prompts p1-p9 are the evaluation's."""
    folder = place / "images"
    png16 = image_bytes((16, 16), "PNG")
    (folder / "p1.png").write_bytes(png16)  # fine
    (folder / "stray.png").write_bytes(png16)  # no such prompt
    (folder / "notes.txt").write_text("drawn on a Tuesday")  # not an image
    (folder / ".DS_Store").write_bytes(b"ignored")
    (folder / "sub").mkdir()  # a folder
    # p2: no image
    (folder / "p3.png").write_bytes(png16)  # two images of p3
    (folder / "p3.jpg").write_bytes(image_bytes((16, 16), "JPEG"))
    (folder / "p4.png").write_bytes(b"")  # empty
    (folder / "p5.png").write_bytes(b"hello")  # no image at all
    jpeg = noise_jpeg((64, 64))
    (folder / "p6.jpg").write_bytes(jpeg[: len(jpeg) // 2])  # truncated in its scan
    (folder / "p7.png").write_bytes(image_bytes((32, 32), "PNG"))  # meta.jsonl says 64x64
    (place / "outside" / "x.png").write_bytes(png16)
    (folder / "p8.png").symlink_to(place / "outside" / "x.png")  # leads outside
    (folder / "inside.png").symlink_to("p1.png")  # a link, and no such prompt
    (folder / "p9.webp").write_bytes(image_bytes((16, 16), "JPEG"))  # a JPEG named .webp
    write_meta(
        folder,
        {"prompt_id": "p1", "latency_s": 1.0, "gpus": 1},
        '{"prompt_id": "p3",',
        [1, 2],
        {"prompt_id": "ghost", "latency_s": 1, "gpus": 1},
        {"prompt_id": "p1", "latency_s": 1, "gpus": 1},
        {"prompt_id": "p7", "width": 64, "height": 64, "latency_s": 2, "gpus": 1},
        {"prompt_id": "p4", "seed": "7", "gpus": 0, "latency_s": -1},
        {"prompt_id": "p6", "latency_s": 1.5, "gpus": 1, "colour": "red", "steps": 4},
        {"prompt_id": "p5", "width": 16},
        '{"prompt_id": "p9", "latency_s": 1, "gpus": 1, "seed": 1, "seed": 2}',
        {"prompt_id": 5},
        '{"latency_s": NaN, "prompt_id": "p8"}',
        '{"prompt_id": "p8", "latency_s": 1e400, "gpus": true, "seed": 1.5}',
        "",
        {"seed": 3, "width": 0, "height": 2},
        {"prompt_id": "p2", "gpus": 2},
    )
    return folder


BAD_PROMPTS = [f"p{n}" for n in range(1, 10)]
KNOWN = "meta.jsonl knows prompt_id, seed, width, height, latency_s, gpus"


def pillow_reason(data: bytes) -> str:
    """Pillow's own words for a file it cannot decode (the message the check passes on)."""
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
    except OSError as error:
        return str(error)
    raise AssertionError("Pillow decoded the file")


def test_every_problem_of_the_folder_is_listed_by_file_and_reason(place):
    folder = bad_folder(place)

    with pytest.raises(ImageFolderError) as refused:
        read_image_folder(folder, BAD_PROMPTS)

    outside = place / "outside" / "x.png"
    cut = pillow_reason((folder / "p6.jpg").read_bytes())
    assert cut.startswith("image file is truncated")
    assert str(refused.value) == "\n".join(
        [
            f"images folder {folder} refused (32 problems):",
            "inside.png: is a symbolic link (to p1.png); put the file itself in the folder",
            "inside.png: no prompt inside in this evaluation",
            "meta.jsonl:2: not JSON (Expecting property name enclosed in double quotes, column 20)",
            "meta.jsonl:3: not a JSON object: [1, 2]",
            "meta.jsonl:4: no prompt ghost in this evaluation",
            "meta.jsonl:5: prompt p1 again (first on line 1)",
            "meta.jsonl:7: gpus must be > 0, got 0",
            "meta.jsonl:7: latency_s must be a finite number >= 0, got -1",
            'meta.jsonl:7: seed must be an integer, got "7"',
            f"meta.jsonl:8: unknown keys colour, steps ({KNOWN})",
            "meta.jsonl:9: gives width but no height (give both or neither)",
            "meta.jsonl:10: not JSON (key seed given twice)",
            "meta.jsonl:11: prompt_id must be a string, got 5",
            "meta.jsonl:12: not JSON (NaN is not a JSON number)",
            "meta.jsonl:13: gpus must be an integer, got true",
            "meta.jsonl:13: latency_s must be a finite number >= 0, got Infinity",
            "meta.jsonl:13: seed must be an integer, got 1.5",
            "meta.jsonl:15: no prompt_id",
            "meta.jsonl:15: width must be > 0, got 0",
            "meta.jsonl:16: gives gpus but no latency_s (give both or neither)",
            "notes.txt: not an image (.png, .jpg, .jpeg, .webp) nor meta.jsonl",
            "p2.*: no image for prompt p2",
            "p3.jpg: one of 2 images for prompt p3 (p3.jpg, p3.png); keep one",
            "p3.png: one of 2 images for prompt p3 (p3.jpg, p3.png); keep one",
            "p4.png: is empty (0 bytes)",
            "p5.png: unreadable image: not a PNG, JPEG or WebP file",
            f"p6.jpg: unreadable image: JPEG that does not decode ({cut})",
            "p7.png: is 32x32, meta.jsonl line 6 says 64x64",
            f"p8.png: resolves outside the folder, to {outside}",
            "p9.webp: holds a JPEG image under a .webp name; name it .jpg",
            "stray.png: no prompt stray in this evaluation",
            "sub: is a folder (the images lie in the folder itself, not in sub-folders)",
        ]
    )
    assert isinstance(refused.value, BundleError)  # what `qct2i` prints without a traceback
    assert len(refused.value.problems) == 32


def test_a_refused_folder_writes_nothing_into_the_bundle(place):
    folder, bundle = bad_folder(place), place / "bundle"
    before = tree(bundle)

    with pytest.raises(ImageFolderError):
        evaluate(folder, bundle)

    assert tree(bundle) == before
    assert not (bundle / "images.jsonl").exists()


def test_a_folder_without_meta_jsonl_is_taken_with_its_cost_unknown(place):
    """Images drawn elsewhere come without timings (issue 32): guards against refusing the
    folder, and against storing a guessed latency or GPU count (0 or 1) instead of null."""
    folder, bundle = good_folder(place), place / "bundle"
    (folder / "meta.jsonl").unlink()

    assert read_image_folder(folder, PROMPTS) == [
        FolderImage("p1", folder / "p1.png", 64, 48, None, None, None),
        FolderImage("p2", folder / "p2.jpg", 32, 32, None, None, None),
        FolderImage("p3", folder / "p3.webp", 40, 20, None, None, None),
    ]
    assert evaluate(folder, bundle) == 3
    untimed = {"latency_s": None, "gpus": None, "seed": None}
    assert images_rows(bundle) == [
        row | untimed | {"image_id": f"mine__{row['prompt_id']}"} for row in EXPECTED_ROWS
    ]
    write_bundle(bundle, {"judgments": judged_yes()})
    images = read_bundle(bundle, TAXONOMY)["images"]
    assert (
        images.select(["latency_s", "gpus"]).to_pylist() == [{"latency_s": None, "gpus": None}] * 3
    )


def test_an_image_without_its_meta_line_has_its_cost_unknown_and_the_others_keep_theirs(place):
    folder = good_folder(place)
    write_meta(folder, {"prompt_id": "p2", "latency_s": 3, "gpus": 2})

    images = read_image_folder(folder, PROMPTS)

    assert [(i.prompt_id, i.latency_s, i.gpus) for i in images] == [
        ("p1", None, None),
        ("p2", 3.0, 2),
        ("p3", None, None),
    ]


def test_a_folder_that_is_not_there_is_refused(place):
    with pytest.raises(ImageFolderError) as refused:
        read_image_folder(place / "nowhere", PROMPTS)
    assert refused.value.problems[0].reason == "no such folder"
    (place / "a_file").write_text("")
    with pytest.raises(ImageFolderError) as refused:
        read_image_folder(place / "a_file", PROMPTS)
    assert str(refused.value).endswith(f"{place / 'a_file'}: is not a folder")


def test_extensions_are_read_in_any_case_and_only_the_evaluation_s_prompts_are_needed(place):
    folder = place / "images"
    (folder / "p2.JPEG").write_bytes(image_bytes((8, 4), "JPEG"))
    write_meta(folder, {"prompt_id": "p2", "latency_s": 1, "gpus": 1})

    [image] = read_image_folder(folder, ["p2"])

    assert (image.prompt_id, image.width, image.height, image.extension) == ("p2", 8, 4, ".jpeg")
    add_folder_images([image], "mine", place / "bundle")
    assert images_rows(place / "bundle")[0]["path"] == "images/mine/p2.jpeg"


def test_a_bundle_holding_another_image_of_a_prompt_is_refused_before_anything_is_copied(place):
    folder, bundle = good_folder(place), place / "bundle"
    evaluate(folder, bundle)
    before = tree(bundle)
    (folder / "p1.png").write_bytes(image_bytes((64, 48), "PNG", "white"))  # redrawn
    write_meta(
        folder,
        {"prompt_id": "p1", "seed": 8, "latency_s": 2.5, "gpus": 1},  # another seed: image_id
        {"prompt_id": "p2", "latency_s": 4, "gpus": 2},  # another latency
        {"prompt_id": "p3", "seed": 0, "latency_s": 0.0, "gpus": 8},
    )
    (folder / "p3.webp").write_bytes(image_bytes((40, 20), "WEBP", "black"))  # other bytes

    with pytest.raises(BundleError) as refused:
        evaluate(folder, bundle)

    assert str(refused.value) == "\n".join(
        [
            f"bundle {bundle} refused (3 problems):",
            "images.jsonl: holds image mine__p1__s7 of model mine for prompt p1, not mine__p1__s8"
            " (the folder's p1.png); evaluate the folder into a new bundle",
            "images.jsonl: holds mine__p2 with latency_s 3.0 (the folder: 4.0)",
            "images/mine/p3.webp: differs from the folder's p3.webp, whose row it holds",
        ]
    )
    assert tree(bundle) == before
    # another generator's images of the same prompts are no conflict
    assert evaluate(folder, bundle, "theirs") == 3


def test_the_images_folder_of_the_model_may_not_lead_out_of_the_bundle(place):
    folder, bundle = good_folder(place), place / "bundle"
    (bundle / "images").mkdir()
    os.symlink(place / "outside", bundle / "images" / "mine")

    with pytest.raises(BundleError) as refused:
        evaluate(folder, bundle)

    assert refused.value.problems[0].reason == (
        f"resolves outside the bundle folder, to {place / 'outside'}"
    )
    assert list((place / "outside").iterdir()) == []


# -- no link followed from the check to the copy ------------------------------------------------


def test_an_image_swapped_for_a_link_after_the_check_is_refused_not_copied(place):
    """Guards against reopening a checked path through a link: the image checked was p1.png,
    a link put in its place afterwards (to a file outside) must not be read or copied."""
    folder, bundle = good_folder(place), place / "bundle"
    images = read_image_folder(folder, PROMPTS)
    secret = place / "outside" / "secret.png"
    secret.write_bytes(image_bytes((64, 48), "PNG", "white"))
    (folder / "p1.png").unlink()
    (folder / "p1.png").symlink_to(secret)

    with pytest.raises(BundleError) as refused:
        add_folder_images(images, "mine", bundle)

    assert [str(problem) for problem in refused.value.problems] == [
        "p1.png: is a symbolic link now (put there after the folder was listed); refused"
    ]
    assert not (bundle / "images" / "mine" / "p1.png").exists()
    assert not (bundle / "images.jsonl").exists()


def test_an_image_changed_after_the_check_is_refused_not_copied(place):
    """What is copied is what was checked: a file of another size put in its place is refused
    from the descriptor the copy would read."""
    folder, bundle = good_folder(place), place / "bundle"
    images = read_image_folder(folder, PROMPTS)
    (folder / "p2.jpg").write_bytes(image_bytes((8, 8), "JPEG"))

    with pytest.raises(BundleError) as refused:
        add_folder_images(images, "mine", bundle)

    assert [str(problem) for problem in refused.value.problems] == [
        "p2.jpg: changed since the folder was checked: is 8x8 now, was 32x32"
    ]
    assert not (bundle / "images.jsonl").exists()


def test_a_link_left_at_the_partial_copy_is_not_written_through(place):
    """Guards against opening `<image>.partial` following a link: a link planted there (to a
    file outside the bundle) is replaced by the copy, the file it led to is untouched."""
    folder, bundle = good_folder(place), place / "bundle"
    victim = place / "outside" / "victim.txt"
    victim.write_text("keep me")
    (bundle / "images" / "mine").mkdir(parents=True)
    (bundle / "images" / "mine" / "p1.png.partial").symlink_to(victim)

    assert evaluate(folder, bundle) == 3

    assert victim.read_text() == "keep me"
    copied = bundle / "images" / "mine" / "p1.png"
    assert not copied.is_symlink() and copied.read_bytes() == (folder / "p1.png").read_bytes()
    assert not (bundle / "images" / "mine" / "p1.png.partial").exists()
