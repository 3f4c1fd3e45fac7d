"""OneIG-Bench as a question bank for the GPU path, end to end on the CPU: `qct2i import-release
oneig --questions-only --out BANK` on the hand release (tests/worlds/oneig.py), three of its
prompts kept (one concept in English and Chinese, questions with parents, a text-rendering
prompt); the bank drawn by the tiny Stable Diffusion (`gpu/generated_images`, one generator),
judged by a tiny Qwen3-VL forced to answer "no" (`gpu/judged_images`) and read by a tiny Qwen3-VL
forced to read one block (`gpu/transcribed_images`); then the folder imported as a bundle
(`qct2i import`) and built (`qct2i build`), both in-process, and the published warehouse read.

Nothing is added to the bank by hand: what the three assets write beside it (images and their
PNGs, the generator's row, judgments, transcriptions) is all the import and the build need.
Expected values are worked out by hand from
the fixture (tests/ingestion/sources/test_oneig_release.py lists every question of the bank):
- oneig-anime-000-en: q1 humans (root), q2 part_whole <- q1, q3 color <- q4, q4 man_made (root);
- oneig-anime-000-zh: q1 humans (root), q2 part_whole <- q1, q3 color (root), q4
  quantification_comparison (root);
- oneig-text-000-en: q1 and q2 text_rendering roots, targets "OPEN LATE" and "Since 1990".
Every answer "no": each root valid with y = 0, each question with a parent masked (3). The OCR
reads ["OPEN LATE"] on the one image with text targets, oneig-text-000-en's: D = 0 + 10 (the
unmatched "Since 1990") over L = 9 + 10, so Text Content (en) = 100 * (1 - 10/19) = 900/19.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import dagster as dg
import pytest

from dagster_defs.assets.evidence import transcribed_images_asset
from dagster_defs.assets.generation import generation_assets
from dagster_defs.ml_resources import (
    ImageGeneratorResource,
    QuestionJudgeResource,
    TextTranscriberResource,
)
from tests.helpers import query, run_main
from tests.ingestion.backends.forced_answers import force_answer, force_judge_answer
from tests.worlds.oneig import write_oneig_fixture

pytestmark = pytest.mark.dbt  # `qct2i build` runs dbt in this process

GENERATOR = "lens"
CONCEPT = "oneig-anime-000"
TEXT_PROMPT = "oneig-text-000-en"
KEPT = (f"{CONCEPT}-en", f"{CONCEPT}-zh", TEXT_PROMPT)
QUESTIONS = {f"{CONCEPT}-en": 4, f"{CONCEPT}-zh": 4, TEXT_PROMPT: 2}
MASKED = {(f"{CONCEPT}-en", "q2"), (f"{CONCEPT}-en", "q3"), (f"{CONCEPT}-zh", "q2")}
READ = ["OPEN LATE"]
TEXT_SCORE_EN = 100 * (1 - 10 / 19)


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")


def _question_bank(root: Path, warehouse: Path) -> Path:
    """`import-release oneig --questions-only` on the hand release, then only KEPT's prompts."""
    release, bank = write_oneig_fixture(root / "oneig"), root / "bank"
    args = ["import-release", "oneig", "--root", str(release), "--questions-only"]
    done = run_main([*args, "--out", str(bank)], warehouse)
    assert done.returncode == 0, done.stderr
    for name in ("prompts", "questions"):
        rows = _jsonl(bank / f"{name}.jsonl")
        _write_jsonl(bank / f"{name}.jsonl", [r for r in rows if r["prompt_id"] in KEPT])
    return bank


def _forced_vl(tiny_vl: Path, root: Path, force) -> str:
    """A resource's tiny-model folder holding a copy of the session's tiny Qwen3-VL, forced."""
    shutil.copytree(tiny_vl, root / "qwen3_vl")
    force(root / "qwen3_vl")
    return str(root)


def _materialize(asset, bundle: Path, resources: dict, **config) -> dg.ExecuteInProcessResult:
    multi = isinstance(asset.partitions_def, dg.MultiPartitionsDefinition)
    partition = dg.MultiPartitionKey({"generator": GENERATOR, "shard": "0"}) if multi else GENERATOR
    result = dg.materialize(
        [asset],
        partition_key=partition,
        resources=resources,
        run_config={"ops": {asset.op.name: {"config": {"bundle": str(bundle), **config}}}},
    )
    assert result.success
    return result


def _run_gpu_path(bank: Path, tiny_sd: Path, tiny_vl: Path, root: Path) -> None:
    """Draw (one generator, one batch), judge "no" to everything, read READ off text prompts."""
    gpu = generation_assets()
    generator = ImageGeneratorResource(profile="cpu", tiny_dir=str(tiny_sd.parent), device="cpu")
    no_judge = _forced_vl(tiny_vl, root / "judge", lambda f: force_judge_answer(f, "no"))
    reader = _forced_vl(
        tiny_vl, root / "ocr", lambda f: force_answer(f, json.dumps({"blocks": READ}))
    )
    _materialize(
        gpu.generated_images,
        bank,
        {"image_generator": generator},
        batch_size=3,
        calibration_images=1,
    )
    _materialize(
        gpu.judged_images, bank, {"question_judge": QuestionJudgeResource(tiny_dir=no_judge)}
    )
    transcriber = TextTranscriberResource(tiny_dir=reader, max_new_tokens=64)
    _materialize(transcribed_images_asset(gpu), bank, {"text_transcriber": transcriber})


@pytest.fixture(scope="module")
def built_bank(tmp_path_factory, tiny_sd, tiny_vl) -> tuple[Path, Path]:
    """(bank, published warehouse): the bank drawn, judged and read, imported and built."""
    root = tmp_path_factory.mktemp("oneig_bank_run")
    warehouse = root / "warehouse" / "w.duckdb"
    bank = _question_bank(root, warehouse)
    _run_gpu_path(bank, tiny_sd, tiny_vl, root)
    imported = run_main(["import", str(bank)], warehouse)
    assert imported.returncode == 0, imported.stderr
    built = run_main(["build"], warehouse)
    assert built.returncode == 0, built.stderr[-3000:]
    return bank, warehouse


def test_the_bank_keeps_one_concept_for_both_languages(built_bank):
    _, warehouse = built_bank
    prompts = query(warehouse, "select prompt_id, concept_id, language from staging.stg_prompts")
    assert sorted(prompts) == [
        (f"{CONCEPT}-en", CONCEPT, "en"),
        (f"{CONCEPT}-zh", CONCEPT, "zh"),
        (TEXT_PROMPT, "oneig-text-000", "en"),
    ]
    # the generator drew the concept's two prompts with one seed (seeds are per concept)
    seeds = query(
        warehouse, f"select distinct seed from raw.images where prompt_id like '{CONCEPT}-%'"
    )
    assert len(seeds) == 1


def test_every_bank_prompt_has_one_image_and_the_generator_its_row(built_bank):
    bank, warehouse = built_bank
    images = query(
        warehouse, "select prompt_id, model_id, width, height, gpus, path from raw.images"
    )
    assert sorted((p, m) for p, m, *_ in images) == [(p, GENERATOR) for p in sorted(KEPT)]
    for *_, width, height, gpus, path in images:
        assert (width, height, gpus) == (32, 32, 1)  # tiny SD on one CPU device
        assert (bank / path).is_file()
    generators = query(warehouse, "select model_id, cost_source from raw.generators")
    assert generators == [(GENERATOR, "measured")]  # the asset's calibration, written by it


def test_every_question_of_every_image_is_judged_and_a_no_masks_its_children(built_bank):
    _, warehouse = built_bank
    judged = query(
        warehouse, "select prompt_id, answer, judge_id, judge_model from staging.stg_judgments"
    )
    assert Counter(p for p, *_ in judged) == QUESTIONS  # one image each: questions x images
    assert {tuple(rest) for _, *rest in judged} == {("no", "default", "tiny-qwen3-vl")}
    records = query(
        warehouse,
        "select prompt_id, question_id, is_valid, outcome, outcome_masked "
        "from marts.fct_question_records",
    )
    assert len(records) == sum(QUESTIONS.values())
    assert {(p, q) for p, q, valid, *_ in records if not valid} == MASKED
    outcomes = {(p, q): (native, masked) for p, q, _, native, masked in records}
    assert {outcomes[key] for key in MASKED} == {(0, None)}
    assert {o for key, o in outcomes.items() if key not in MASKED} == {(0, 0)}


def test_only_the_prompt_with_text_targets_is_read(built_bank):
    _, warehouse = built_bank
    read = query(
        warehouse,
        "select prompt_id, model_id, transcription_status, text_blocks "
        "from staging.stg_transcriptions",
    )
    assert read == [(TEXT_PROMPT, GENERATOR, "ok", READ)]


def test_the_leaderboard_scores_the_generator_as_worked_by_hand(built_bank):
    _, warehouse = built_bank
    board = query(
        warehouse,
        "select language_scope, hcq_total, entities, text, attributes, relations, n_groups, "
        "text_evidence from marts.fct_hcq_leaderboard",
    )
    expected = {
        # Entities 0 (humans, man_made), Text 900/19; no valid Attributes or Relations
        "en": (TEXT_SCORE_EN / 2, 0.0, TEXT_SCORE_EN, None, None, 2, "transcription"),
        # Entities (humans), Attributes (color q3), Relations (quantification q4): all 0
        "zh": (0.0, 0.0, None, 0.0, 0.0, 3, "transcription"),
        "pooled": (TEXT_SCORE_EN / 4, 0.0, TEXT_SCORE_EN, 0.0, 0.0, 4, "transcription"),
    }
    rows = {scope: tuple(row) for scope, *row in board}
    assert sorted(rows) == sorted([*expected, "bilingual"])
    for scope, row in expected.items():
        assert rows[scope] == pytest.approx(row), scope
    assert rows["bilingual"][0] == pytest.approx(TEXT_SCORE_EN / 4)  # (en + zh) / 2


def test_the_capability_scores_hold_the_valid_questions_worked_by_hand(built_bank):
    _, warehouse = built_bank
    scores = query(
        warehouse,
        "select language_scope, capability, n_valid, score from marts.fct_capability_scores "
        f"where model_id = '{GENERATOR}' and n_valid > 0",
    )
    text = pytest.approx(TEXT_SCORE_EN)
    by_scope = {
        "en": {"humans": 1, "man_made": 1, "text_rendering": 2},
        "zh": {"humans": 1, "color": 1, "quantification_comparison": 1},
        "pooled": {
            "humans": 2,
            "man_made": 1,
            "color": 1,
            "quantification_comparison": 1,
            "text_rendering": 2,
        },
    }
    assert {(s, c): (n, score) for s, c, n, score in scores} == {
        (scope, capability): (n, text if capability == "text_rendering" else 0.0)
        for scope, valid in by_scope.items()
        for capability, n in valid.items()
    }


def test_the_releases_report_travels_with_the_bank(built_bank):
    _, warehouse = built_bank
    # tests/ingestion/sources/test_oneig_release.py: 21 dirty rows, 2 derived text questions
    assert query(warehouse, "select count(*) from marts.fct_conversion_report") == [(23,)]
