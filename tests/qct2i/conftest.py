"""Fixtures of the console-script tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import publish_bundle
from tests.worlds.hand import write_hand_bundle


@pytest.fixture
def published(tmp_path) -> Path:
    """A warehouse published from the hand bundle (with transcriptions)."""
    return publish_bundle(write_hand_bundle(tmp_path / "a"), tmp_path / "w.duckdb")
