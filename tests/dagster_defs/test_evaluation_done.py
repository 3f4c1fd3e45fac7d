"""When an evaluation's folder counts as done (`dagster_defs.evaluation.is_done`): the done file
holds the fingerprint of the evidence the last build took."""

from __future__ import annotations

from dagster_defs.evaluation import DONE_FILE, is_done, mark_done


def test_a_finished_evaluation_whose_evidence_changed_is_not_done(tmp_path):
    """Guards against a rerun that says "nothing new" and skips the import and build after the
    folder's evidence changed (a judge appended rows). Planted bug it catches (issue 36):
    `is_done` true whenever the done file exists, the evidence fingerprint not compared."""
    (tmp_path / "judgments.jsonl").write_text('{"answer": "yes"}\n', encoding="utf-8")
    assert not is_done(tmp_path)  # never built
    mark_done(tmp_path)
    assert (tmp_path / DONE_FILE).exists() and is_done(tmp_path)
    with (tmp_path / "judgments.jsonl").open("a", encoding="utf-8") as judgments:
        judgments.write('{"answer": "no"}\n')
    assert not is_done(tmp_path)  # a row the build has not taken
    mark_done(tmp_path)
    (tmp_path / "images.jsonl").write_text('{"image_path": "a.png"}\n', encoding="utf-8")
    assert not is_done(tmp_path)  # a file that was absent now holds rows
