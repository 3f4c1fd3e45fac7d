"""Fixtures of the console-script tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import copy_warehouse


@pytest.fixture
def published(hand_published, tmp_path) -> Path:
    """A copy of the session's published hand warehouse (with transcriptions), to write into."""
    return copy_warehouse(hand_published, tmp_path)
