"""How an image path is shown in a refusal (`ingestion.bundle.image_paths._shown`): as JSON, so
a line break or a control character stays visible, and cut beyond 120 characters with the full
length; holes `make mutation` found (issue 36). Expected strings written by hand."""

from __future__ import annotations

from ingestion.bundle.image_paths import _shown


def test_a_short_path_is_shown_as_json_with_its_characters_kept():
    """Guards the JSON form (quotes, a line break escaped) and non-ASCII kept as written."""
    assert _shown("img/a.png") == '"img/a.png"'
    assert _shown("img/a\nb.png") == '"img/a\\nb.png"'
    assert _shown("图/猫.png") == '"图/猫.png"'


def test_a_path_of_120_characters_is_whole_and_a_longer_one_cut_with_its_length():
    """Guards the cut: at exactly 120 characters the path is shown whole; at 1,234 its first 120
    are shown, then the length with a thousands separator."""
    assert _shown("a" * 120) == '"' + "a" * 120 + '"'
    assert _shown("é" * 1234) == '"' + "é" * 120 + '"... (1,234 characters)'
