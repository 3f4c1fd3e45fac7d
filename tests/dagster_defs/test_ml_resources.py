"""The cpu profile's tiny models: a name it does not know is an error, not a silent Qwen3-VL."""

from __future__ import annotations

import pytest

from dagster_defs.ml_resources import _tiny


def test_an_unknown_tiny_model_is_an_error_naming_the_known_ones(tmp_path):
    folder = tmp_path / "tiny" / "text_lm"
    with pytest.raises(ValueError) as refused:
        _tiny(folder, "lmm")
    assert str(refused.value) == "unknown tiny model 'lmm'; known: lm, sd, vl"
    assert not (tmp_path / "tiny").exists()  # nothing built, not even the folder
