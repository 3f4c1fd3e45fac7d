"""A refusal's parts (`ingestion.bundle.problems`): what a caller reads off a BundleError.
Written for a mutant every test survived (issue 36: the refused folder not kept)."""

from __future__ import annotations

from pathlib import Path

from ingestion.bundle.problems import BundleError, Problem


def test_a_refusal_keeps_its_folder_and_lists_every_problem_where_it_is():
    problems = [Problem("images.jsonl", 3, "no prompt p9"), Problem("prompts", None, "empty")]
    error = BundleError(Path("/b"), problems)
    assert (error.folder, error.problems) == (Path("/b"), problems)
    assert (
        str(error)
        == "bundle /b refused (2 problems):\nimages.jsonl:3: no prompt p9\nprompts: empty"
    )
