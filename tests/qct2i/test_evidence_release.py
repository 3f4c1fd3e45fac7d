"""Reproducible evidence releases (issue 15): `qct2i export DIR` writes the published warehouse's
evidence as Parquet with a manifest; `qct2i import DIR` refuses a release whose files differ from
the manifest; an import and a build of a release give marts byte-identical to the exporter's
(`qct2i verify DIR`). Every step runs the console script as a user does.

The world is the hand bundle (tests/worlds/hand.py) with everything a release must carry: a second
judge, human ratings, generators with revisions, images with seeds, and one prompt whose
questions are not in id order (the importer numbers questions in file order, and the structural
marts depend on that number).
"""

from __future__ import annotations

import hashlib
import json
import shutil

import duckdb
import pyarrow.parquet as pq
import pytest

from ingestion.bundle.format import DEFAULT_JUDGE_ID, TABLES, write_bundle
from qct2i.evidence_release import export_evidence
from reporting.fingerprints import mart_fingerprints
from tests.helpers import publish_bundle, query, run_cli
from tests.worlds.hand import hand_bundle_tables

SECOND_JUDGE = {
    "judge_id": "j2",
    "judge_model": "tiny-vl",
    "judge_revision": "r1",
    "prompt_template_sha": "abc123",
}
MODELS = ("m1", "m2")


def release_world_tables() -> dict[str, list[dict]]:
    tables = hand_bundle_tables()
    # cB's questions in the file as q2, q1: question_order must survive the round trip
    tables["questions"] = [
        q for q in tables["questions"] if not q["prompt_id"].startswith("cB")
    ] + [
        q
        for prompt in ("cB-en", "cB-zh")
        for qid in ("q2", "q1")
        for q in tables["questions"]
        if q["prompt_id"] == prompt and q["question_id"] == qid
    ]
    second = [
        {**j, **SECOND_JUDGE, "answer": "no" if j["answer"] == "yes" else "yes", "p_yes": None}
        for j in tables["judgments"]
    ]
    tables["judgments"] = tables["judgments"] + second
    tables["generators"] = [
        {
            "model_id": m,
            "display_name": m.upper(),
            "cost_gpu_s_per_mp": 2.5,
            "hub_id": f"org/{m}",
            "revision": f"rev-{m}",
            "pipeline_class": "StableDiffusionPipeline",
            "cost_source": "bundle",
        }
        for m in MODELS
    ]
    pairs = [(p["prompt_id"], m) for p in tables["prompts"] for m in MODELS]
    tables["images"] = [
        {
            "image_id": f"{m}-{p}",
            "prompt_id": p,
            "model_id": m,
            "width": 512,
            "height": 512,
            "latency_s": 1.25,
            "gpus": 1,
            "path": None,
            "seed": 100 + i,
            "steps": 20,
            "guidance": 7.5,
            "generator_revision": f"rev-{m}",
            "backend": "diffusers",
        }
        for i, (p, m) in enumerate(pairs)
    ]
    tables["ratings"] = [
        {"prompt_id": p, "model_id": m, "rater_id": r, "rating": 1.0 + (i + k) % 5, "scale": "lk5"}
        for i, (p, m) in enumerate(pairs)
        for k, r in enumerate(("r1", "r2"))
    ]
    return tables


def _ok(done):
    assert done.returncode == 0, done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """(bundle tables, exporter's warehouse, release folder): the world imported, built,
    published and exported."""
    root = tmp_path_factory.mktemp("release")
    tables = release_world_tables()
    write_bundle(root / "bundle", tables)
    warehouse = publish_bundle(root / "bundle", root / "exporter" / "qct2i.duckdb")
    done = _ok(run_cli(["export", str(root / "release")], warehouse))
    assert f"wrote {len(TABLES)} files and manifest.json" in done.stdout
    return tables, warehouse, root / "release"


def _manifest(release) -> dict:
    return json.loads((release / "manifest.json").read_text(encoding="utf-8"))


def _copy(release, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(release, copy)
    return copy


def _sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- the round trip -------------------------------------------------------------------------


def test_import_and_build_of_a_release_gives_byte_identical_marts(exported, tmp_path):
    _, exporter, release = exported
    importer = tmp_path / "importer" / "qct2i.duckdb"
    imported = _ok(run_cli(["import", str(release)], importer))
    assert f"{release / 'manifest.json'}: every file matches its SHA-256" in imported.stdout
    _ok(run_cli(["build"], importer))

    theirs, ours = mart_fingerprints(exporter), mart_fingerprints(importer)
    filled = [mart for mart, f in ours.items() if f["rows"] > 0]
    assert len(filled) >= 15 and "fct_question_records" in filled, ours
    assert {m: f["md5"] for m, f in ours.items()} == {m: f["md5"] for m, f in theirs.items()}
    assert _manifest(release)["marts"] == {
        m: {"rows": f["rows"], "md5": f["md5"]} for m, f in theirs.items()
    }
    for name in TABLES:  # the evidence itself came through whole, row for row
        assert query(importer, f"from raw.{name} order by all") == query(
            exporter, f"from raw.{name} order by all"
        ), name

    verified = _ok(run_cli(["verify", str(release)], importer))
    assert f"marts match the manifest: {len(theirs)} marts, each MD5 equal" in verified.stdout


def test_verify_names_a_mart_whose_hash_differs(exported, tmp_path):
    _, exporter, release = exported
    copy = _copy(release, tmp_path)
    manifest = _manifest(copy)
    board = manifest["marts"]["fct_hcq_leaderboard"]
    actual_md5, board["md5"] = board["md5"], "0" * 32
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    done = run_cli(["verify", str(copy)], exporter)
    assert done.returncode == 1
    rows = board["rows"]
    assert (
        f"fct_hcq_leaderboard: MD5 expected {'0' * 32} ({rows} rows), "
        f"actual {actual_md5} ({rows} rows)\n"
    ) in done.stderr
    assert f"1 of {len(manifest['marts'])} marts differ" in done.stderr


# -- refusals ---------------------------------------------------------------------------------


@pytest.mark.parametrize("append", [False, True], ids=["replace", "append"])
def test_one_altered_byte_is_refused_and_nothing_is_written(exported, tmp_path, append):
    _, _, release = exported
    copy = _copy(release, tmp_path)
    target = copy / "judgments.parquet"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    expected = _manifest(release)["files"]["judgments.parquet"]["sha256"]
    assert expected == _sha256(release / "judgments.parquet")

    warehouse = tmp_path / "w" / "qct2i.duckdb"
    done = run_cli(["import", *(["--append"] if append else []), str(copy)], warehouse)
    assert done.returncode == 2
    assert done.stderr == (
        f"bundle {copy} refused (1 problems):\n"
        "judgments.parquet: changed since the release was written: SHA-256 expected "
        f"{expected} (manifest.json), actual {_sha256(target)}\n"
    )
    assert not warehouse.exists()
    assert not warehouse.with_name("qct2i.working.duckdb").exists()


def test_a_missing_and_an_extra_file_are_refused(exported, tmp_path):
    _, _, release = exported
    copy = _copy(release, tmp_path)
    (copy / "prompts.parquet").unlink()
    (copy / "notes.txt").write_text("hello", encoding="utf-8")

    done = run_cli(["import", str(copy)], tmp_path / "w" / "qct2i.duckdb")
    assert done.returncode == 2
    assert done.stderr == (
        f"bundle {copy} refused (2 problems):\n"
        "prompts.parquet: listed in manifest.json but missing\n"
        "notes.txt: not listed in manifest.json (a release holds only the files it lists)\n"
    )
    assert "Traceback" not in done.stderr


def test_an_unreadable_manifest_is_refused(exported, tmp_path):
    _, _, release = exported
    copy = _copy(release, tmp_path)
    (copy / "manifest.json").write_text("{not json", encoding="utf-8")

    done = run_cli(["import", str(copy)], tmp_path / "w" / "qct2i.duckdb")
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"bundle {copy} refused (1 problems):\nmanifest.json: cannot be read as JSON ("
    )


# -- what the release holds -------------------------------------------------------------------


def test_manifest_row_counts_and_checksums_match_the_files_and_the_warehouse(exported):
    tables, exporter, release = exported
    files = _manifest(release)["files"]
    assert sorted(files) == sorted(f"{name}.parquet" for name in TABLES)
    for name in TABLES:
        entry = files[f"{name}.parquet"]
        (stored,) = query(exporter, f"select count(*) from raw.{name}")[0]
        assert entry["rows"] == stored == len(tables.get(name, [])), name
        assert entry["rows"] == pq.read_metadata(release / f"{name}.parquet").num_rows
        assert entry["sha256"] == _sha256(release / f"{name}.parquet")


def test_files_have_the_contract_columns_and_rows_in_release_order(exported):
    tables, _, release = exported
    for name, spec in TABLES.items():
        table = pq.read_table(release / f"{name}.parquet")
        assert table.schema.names == list(spec.column_names), name
        assert [f.type for f in table.schema] == [c.type for c in spec.columns], name
        rows = table.to_pylist()
        if name == "questions":  # file order within each prompt, prompts in id order
            expected = sorted(tables[name], key=lambda q: q["prompt_id"])  # a stable sort
            assert [(q["prompt_id"], q["question_id"]) for q in rows] == [
                (q["prompt_id"], q["question_id"]) for q in expected
            ]
        else:
            keys = [tuple(row[k] for k in spec.key) for row in rows]
            assert keys == sorted(keys) and len(keys) == len(set(keys)), name


def test_a_release_keeps_every_judge_and_the_ratings(exported):
    tables, _, release = exported
    judgments = pq.read_table(release / "judgments.parquet").to_pylist()
    expected = [
        {**{c: None for c in TABLES["judgments"].column_names}, **j} for j in tables["judgments"]
    ]
    for row in expected:
        row["judge_id"] = row["judge_id"] or DEFAULT_JUDGE_ID
    assert sorted(judgments, key=repr) == sorted(expected, key=repr)
    ratings = pq.read_table(release / "ratings.parquet").to_pylist()
    assert sorted(ratings, key=repr) == sorted(tables["ratings"], key=repr)

    manifest = _manifest(release)
    assert manifest["judges"] == [
        {
            "judge_id": "default",
            "judge_model": None,
            "judge_revision": None,
            "prompt_template_sha": None,
            "n_judgments": 36,
        },
        {**SECOND_JUDGE, "n_judgments": 36},
    ]
    assert [(g["model_id"], g["revision"]) for g in manifest["generators"]] == [
        ("m1", "rev-m1"),
        ("m2", "rev-m2"),
    ]
    assert manifest["seeds"]["images"]["distinct"] == list(range(100, 108))
    assert manifest["seeds"]["dbt_vars"]["router_seed"] == manifest["dbt_vars"]["router_seed"]
    assert manifest["code"]["package_version"] == "0.1.0"
    assert (
        manifest["build"]["build_id"]
        == query(exported[1], "select build_id from main.build_id")[0][0]
    )


# -- where the release is written -------------------------------------------------------------


def test_export_refuses_a_taken_folder_and_force_replaces_only_a_release(exported, tmp_path):
    _, exporter, _ = exported
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "thesis.tex").write_text("mine", encoding="utf-8")
    for extra in ([], ["--force"]):
        done = run_cli(["export", str(taken), *extra], exporter)
        assert done.returncode == 2 and "Nothing was written." in done.stderr, done.stderr
        assert [p.name for p in taken.iterdir()] == ["thesis.tex"]
    assert f"{taken}: not empty" in run_cli(["export", str(taken)], exporter).stderr

    previous = tmp_path / "previous"
    _ok(run_cli(["export", str(previous)], exporter))
    (previous / "stale.txt").write_text("left over", encoding="utf-8")
    _ok(run_cli(["export", str(previous), "--force"], exporter))
    assert not (previous / "stale.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["previous", "taken"]  # nothing aside


def test_a_failed_export_leaves_nothing(tmp_path):
    not_a_warehouse = tmp_path / "broken.duckdb"
    not_a_warehouse.write_text("not a database", encoding="utf-8")
    with pytest.raises(duckdb.Error):
        export_evidence(not_a_warehouse, tmp_path / "release")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.duckdb"]


# -- builds with overridden vars ----------------------------------------------------------------


def test_a_release_built_for_another_judge_says_so_and_rebuilds_only_with_it(exported, tmp_path):
    tables, default_build, _ = exported
    write_bundle(tmp_path / "bundle", tables)
    exporter = tmp_path / "exporter" / "qct2i.duckdb"
    _ok(run_cli(["import", str(tmp_path / "bundle")], exporter))
    _ok(run_cli(["build", "--official-judge", "j2"], exporter))
    _ok(run_cli(["export", str(tmp_path / "release")], exporter))
    manifest = _manifest(tmp_path / "release")

    assert manifest["dbt_vars"]["official_judge"] == "j2"
    assert json.loads(manifest["build"]["build_vars"]) == {"official_judge": "j2"}
    # the same evidence built for the default judge: other marts, and verify names the cause
    refused = run_cli(["verify", str(tmp_path / "release")], default_build)
    assert refused.returncode == 1
    assert 'the exporter built with the dbt vars {"official_judge": "j2"}' in refused.stderr
    importer = tmp_path / "importer" / "qct2i.duckdb"
    _ok(run_cli(["import", str(tmp_path / "release")], importer))
    _ok(run_cli(["build", "--official-judge", "j2"], importer))
    assert _ok(run_cli(["verify", str(tmp_path / "release")], importer)).returncode == 0
