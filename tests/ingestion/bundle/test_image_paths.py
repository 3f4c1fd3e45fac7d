"""Image paths stay inside (issue 24): an `images.path` must resolve, symbolic links followed,
inside the bundle folder or inside an image root the caller names (`image_roots`,
`qct2i import --image-root DIR`), else the bundle is refused with file, line and reason, through
`read_bundle` and through `qct2i import`, and nothing is written. A path to a file that does not
exist is accepted, as before: only where a path leads is new.

Each test lays out its own folders under tmp_path: `bundle/` (GOOD of tests/worlds/good_bundle.py,
whose image i1 is `img/i1.png` on line 1) and `elsewhere/` beside it. Expected messages are
written out by hand.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from ingestion.bundle import BundleError, Problem, read_bundle
from ingestion.bundle.append import append_bundle
from ingestion.store.warehouse import Warehouse
from tests.helpers import run_main
from tests.worlds.good_bundle import TAXONOMY, good, problems_of, raw_rows, write

HINT = " (name its folder with --image-root DIR to allow it)"


@pytest.fixture
def place(tmp_path) -> Path:
    """tmp_path resolved (the messages show resolved paths), with `elsewhere/secret.png` in it."""
    root = tmp_path.resolve()
    (root / "elsewhere").mkdir()
    (root / "elsewhere" / "secret.png").write_bytes(b"not an image of the bundle")
    return root


def bundle_with_path(place: Path, path: str, fmt: str = "jsonl") -> Path:
    """GOOD with image i1's path (line 1) replaced by `path`."""
    tables = good()
    tables["images"][0]["path"] = path
    return write(place / "bundle", tables, fmt)


def bundle_with_secret_linked(place: Path) -> Path:
    """GOOD with image i1's file (`img/i1.png`) a symbolic link to `elsewhere/secret.png`."""
    bundle = write(place / "bundle", good())
    (bundle / "img").mkdir()
    (bundle / "img" / "i1.png").symlink_to(place / "elsewhere" / "secret.png")
    return bundle


def stored_paths(bundle: Path, image_roots=()) -> list:
    return read_bundle(bundle, TAXONOMY, image_roots=image_roots)["images"]["path"].to_pylist()


def problems_of_with_roots(bundle: Path, roots: list[Path]) -> list[Problem]:
    with pytest.raises(BundleError) as refused:
        read_bundle(bundle, TAXONOMY, image_roots=roots)
    return refused.value.problems


# ------------------------------------------------------------------------------------------------
# Refused: a path that leaves the bundle folder
# ------------------------------------------------------------------------------------------------


def test_a_path_climbing_out_is_refused_with_file_line_and_where_it_leads(place):
    bundle = bundle_with_path(place, "../outside.png")

    assert problems_of(bundle) == [
        Problem(
            "images.jsonl",
            1,
            f'path "../outside.png" resolves outside the bundle folder, to "{place}/outside.png"'
            + HINT,
        )
    ]


def test_an_absolute_path_elsewhere_is_refused(place):
    secret = f"{place}/elsewhere/secret.png"
    bundle = bundle_with_path(place, secret)

    assert problems_of(bundle) == [
        Problem("images.jsonl", 1, f'path "{secret}" resolves outside the bundle folder' + HINT)
    ]


def test_a_path_that_climbs_out_and_back_in_elsewhere_is_refused(place):
    bundle = bundle_with_path(place, "img/../../elsewhere/secret.png")

    assert problems_of(bundle) == [
        Problem(
            "images.jsonl",
            1,
            'path "img/../../elsewhere/secret.png" resolves outside the bundle folder, '
            f'to "{place}/elsewhere/secret.png"' + HINT,
        )
    ]


def test_a_symbolic_link_out_is_refused_with_where_it_leads(place):
    bundle = bundle_with_secret_linked(place)

    assert problems_of(bundle) == [
        Problem(
            "images.jsonl",
            1,
            'path "img/i1.png" resolves outside the bundle folder through a symbolic link, '
            f'to "{place}/elsewhere/secret.png"' + HINT,
        )
    ]


def test_a_linked_folder_out_is_refused_even_for_a_file_that_does_not_exist(place):
    """`img` leads elsewhere: its images would be read from there, whether or not i1.png is
    there yet."""
    bundle = write(place / "bundle", good())
    (bundle / "img").symlink_to(place / "elsewhere", target_is_directory=True)

    assert problems_of(bundle) == [
        Problem(
            "images.jsonl",
            1,
            'path "img/i1.png" resolves outside the bundle folder through a symbolic link, '
            f'to "{place}/elsewhere/i1.png"' + HINT,
        )
    ]


def test_dot_dot_after_a_link_is_taken_where_the_link_leads(place):
    """`up/../i1.png` reads as `bundle/i1.png`, but `up` leads to elsewhere/sub, so the file
    system opens elsewhere/i1.png: the check follows the file system, not the text."""
    (place / "elsewhere" / "sub").mkdir()
    bundle = bundle_with_path(place, "up/../i1.png")
    (bundle / "up").symlink_to(place / "elsewhere" / "sub", target_is_directory=True)

    assert problems_of(bundle) == [
        Problem(
            "images.jsonl",
            1,
            'path "up/../i1.png" resolves outside the bundle folder through a symbolic link, '
            f'to "{place}/elsewhere/i1.png"' + HINT,
        )
    ]


def test_every_path_out_is_listed_with_its_row_in_parquet(place):
    tables = good()
    tables["images"][0]["path"] = "../a.png"
    tables["images"][2]["path"] = "/b.png"
    bundle = write(place / "bundle", tables, "parquet")

    assert problems_of(bundle) == [
        Problem(
            "images.parquet",
            1,
            f'path "../a.png" resolves outside the bundle folder, to "{place}/a.png"' + HINT,
        ),
        Problem("images.parquet", 3, 'path "/b.png" resolves outside the bundle folder' + HINT),
    ]


def test_a_path_holding_a_nul_is_refused(place):
    bundle = bundle_with_path(place, "img/i\x001.png")

    assert problems_of(bundle) == [
        Problem(
            "images.jsonl",
            1,
            'path "img/i\\u00001.png" holds a NUL character, which no file name can',
        )
    ]


# ------------------------------------------------------------------------------------------------
# Image roots
# ------------------------------------------------------------------------------------------------


def test_an_absolute_path_inside_a_named_image_root_is_accepted_as_written(place):
    secret = f"{place}/elsewhere/secret.png"
    bundle = bundle_with_path(place, secret)

    assert stored_paths(bundle, [place / "elsewhere"]) == [secret, None, None]


def test_a_link_into_a_named_image_root_is_accepted(place):
    bundle = bundle_with_secret_linked(place)

    assert stored_paths(bundle, [place / "elsewhere"]) == ["img/i1.png", None, None]


def test_a_relative_image_root_is_taken_from_the_working_folder(place, monkeypatch):
    monkeypatch.chdir(place)
    bundle = bundle_with_path(place, f"{place}/elsewhere/secret.png")

    assert stored_paths(bundle, [Path("elsewhere")])[0] == f"{place}/elsewhere/secret.png"


def test_a_path_outside_the_bundle_and_every_root_names_both(place):
    (place / "other").mkdir()
    bundle = bundle_with_path(place, "../outside.png")

    problems = problems_of_with_roots(bundle, [place / "elsewhere", place / "other"])

    assert problems == [
        Problem(
            "images.jsonl",
            1,
            'path "../outside.png" resolves outside the bundle folder and the image roots, '
            f'to "{place}/outside.png"',
        )
    ]


def test_a_folder_whose_name_extends_a_root_is_not_inside_it(place):
    (place / "elsewhere2").mkdir()
    beside = f"{place}/elsewhere2/secret.png"
    bundle = bundle_with_path(place, beside)

    problems = problems_of_with_roots(bundle, [place / "elsewhere"])

    assert problems == [
        Problem(
            "images.jsonl",
            1,
            f'path "{beside}" resolves outside the bundle folder and the image roots',
        )
    ]


def test_an_image_root_that_is_not_a_folder_is_refused_alone(place):
    """A misspelt root: the path meant for it is not refused as well."""
    bundle = bundle_with_path(place, f"{place}/elsewhere/secret.png")

    problems = problems_of_with_roots(bundle, [place / "elsewere"])

    assert problems == [
        Problem("(command line)", None, f'image root "{place}/elsewere" is not a folder')
    ]


# ------------------------------------------------------------------------------------------------
# Accepted: inside the bundle, whether or not the file exists (as before)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "img/i1.png",  # GOOD's own, a file that does not exist
        "img/../img/i1.png",
        "./i1.png",
        "img/i1.png/",
    ],
)
def test_relative_paths_inside_are_accepted(place, path):
    assert stored_paths(bundle_with_path(place, path)) == [path, None, None]


def test_an_absolute_path_inside_the_bundle_is_accepted(place):
    inside = f"{place}/bundle/img/i1.png"

    assert stored_paths(bundle_with_path(place, inside)) == [inside, None, None]


def test_a_link_that_stays_inside_is_accepted(place):
    bundle = write(place / "bundle", good())
    (bundle / "kept").mkdir()
    (bundle / "kept" / "i1.png").write_bytes(b"png")
    (bundle / "img").symlink_to("kept", target_is_directory=True)

    assert stored_paths(bundle) == ["img/i1.png", None, None]


def test_a_bundle_reached_through_a_link_keeps_its_relative_paths_inside(place):
    bundle = write(place / "bundle", good())
    (place / "linked").symlink_to(bundle, target_is_directory=True)

    assert stored_paths(place / "linked") == ["img/i1.png", None, None]


# ------------------------------------------------------------------------------------------------
# Through `qct2i import`: status 2, the message, nothing written
# ------------------------------------------------------------------------------------------------


def test_qct2i_import_refuses_a_path_out_and_writes_no_warehouse(place):
    bundle = bundle_with_path(place, "../outside.png")
    warehouse = place / "wh" / "w.duckdb"

    refused = run_main(["import", str(bundle)], warehouse)

    assert refused.returncode == 2, refused.stdout + refused.stderr
    message = f'path "../outside.png" resolves outside the bundle folder, to "{place}/outside.png"'
    assert f"images.jsonl:1: {message}{HINT}\n" in refused.stderr
    assert "Traceback" not in refused.stdout + refused.stderr
    assert not list(warehouse.parent.glob("*.duckdb")), "a refused bundle wrote a warehouse"


def test_qct2i_import_refused_leaves_the_working_copy_unchanged(place):
    warehouse = place / "w.duckdb"
    first = run_main(["import", str(write(place / "first", good()))], warehouse)
    assert first.returncode == 0, first.stderr
    working = Warehouse(warehouse).working
    before, data = raw_rows(working), working.read_bytes()

    refused = run_main(["import", str(bundle_with_path(place, "/etc/passwd"))], warehouse)
    appended = run_main(["import", "--append", str(place / "bundle")], warehouse)

    for run in (refused, appended):
        assert run.returncode == 2, run.stdout + run.stderr
        assert 'images.jsonl:1: path "/etc/passwd" resolves outside the bundle folder' in (
            run.stderr
        )
    assert working.read_bytes() == data
    assert raw_rows(working) == before


def test_qct2i_import_with_image_root_stores_the_path_as_written(place):
    secret = f"{place}/elsewhere/secret.png"
    bundle = bundle_with_path(place, secret)
    warehouse = place / "w.duckdb"
    root = ["--image-root", str(place / "elsewhere")]

    imported = run_main(["import", *root, str(bundle)], warehouse)
    appended = run_main(["import", "--append", *root, str(bundle)], warehouse)

    assert imported.returncode == 0, imported.stderr
    assert appended.returncode == 0, appended.stderr
    assert "nothing new: the warehouse already holds every row" in appended.stdout
    with duckdb.connect(str(Warehouse(warehouse).working), read_only=True) as con:
        paths = con.execute("SELECT path FROM raw.images ORDER BY image_id").fetchall()
    assert paths == [(secret,), (None,), (None,)]


def test_append_takes_image_roots(place):
    secret = f"{place}/elsewhere/secret.png"
    bundle = bundle_with_path(place, secret)
    warehouse = place / "w.duckdb"

    result = append_bundle(
        bundle, warehouse, capabilities=TAXONOMY, image_roots=[place / "elsewhere"]
    )

    assert result.added["images"] == 3


def test_the_import_help_names_the_option():
    shown = run_main(["import", "--help"], Path("unused.duckdb"))

    assert "--image-root DIR" in shown.stdout
