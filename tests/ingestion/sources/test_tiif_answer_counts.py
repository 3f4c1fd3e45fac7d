"""A TIIF-Bench result with more answers than questions (`ingestion.sources.tiif_release`), on
the hand release of tests/ingestion/sources/test_tiif_release.py."""

from __future__ import annotations

import json

from ingestion.sources.tiif_release import convert_tiif
from tests.ingestion.sources.test_tiif_release import _jsonl, _path, _result, write_tiif_fixture


def test_more_answers_than_questions_are_not_paired(tmp_path):
    """Guards against pairing a result whose answer count is not the question count as if it
    were whole when it has *extra* answers. Planted bug it catches (issue 36):
    `len(preds) == len(compliant)` turned into `>=` in `_result_judgments`, which stored the first
    two of three answers as the judge's. By hand: color+2d line 1 has two questions; three
    answers make it `answer_count_mismatch`, both answers stored null."""
    release = write_tiif_fixture(tmp_path / "tiif")
    place = ("QwenVL", "gen-a", "color+2d", "short", "0.json")
    _jsonl(tmp_path / "tiif" / _path(*place), [_result("color+2d", 1, "short", ["yes"] * 3)])
    conversion = convert_tiif(release, tmp_path / "bundle")
    mismatches = {
        (r.file, r.reason) for r in conversion.dirty if r.dirty_class == "answer_count_mismatch"
    }
    assert (_path(*place), "3 answers to 2 questions; every answer stored null") in mismatches
    lines = (tmp_path / "bundle" / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    stored = [
        j["answer"]
        for j in map(json.loads, lines)
        if (j["judge_id"], j["model_id"], j["prompt_id"])
        == ("QwenVL", "gen-a", "tiif-color_2d-0-short")
    ]
    assert stored == [None, None]
