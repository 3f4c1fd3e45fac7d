"""Missing test data (../shared) skips a test locally and fails it under CI=true."""

from __future__ import annotations

import pytest

from tests.helpers import require_test_data


@pytest.mark.parametrize("ci", ["true", "TRUE", "1"])
def test_missing_data_fails_under_ci(tmp_path, monkeypatch, ci):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match="CI=true requires it"):
        require_test_data(tmp_path / "absent.csv", "the annotations")


@pytest.mark.parametrize("ci", [None, "", "false"])
def test_missing_data_skips_outside_ci(tmp_path, monkeypatch, ci):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match="the annotations not found"):
        require_test_data(tmp_path / "absent.csv", "the annotations")


def test_present_data_is_returned_under_ci(tmp_path, monkeypatch):
    monkeypatch.setenv("CI", "true")
    present = tmp_path / "present.csv"
    present.write_text("x\n", encoding="utf-8")
    assert require_test_data(present, "the annotations") == present
