"""dbt vars as a Python model receives them (`method.dbt_vars`), beyond the common cases of
tests/method/test_formula_homes.py: written for mutants every test survived (issue 36)."""

from __future__ import annotations

import pytest

from method.dbt_vars import var_bool, var_float, var_int, var_list


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2]", [1, 2]),  # a repr keeps its values' types (bare text would give '1', '2')
        ("(3, 'a')", [3, "a"]),
        ("[Xa, bX]", ["Xa", "bX"]),  # bare text: only brackets, spaces and quotes are cut
        ("[X, a]", ["X", "a"]),
        ("a, '', b", ["a", "b"]),  # an item of quotes alone is no item
    ],
)
def test_var_list_keeps_what_is_not_quoting(text, expected):
    assert var_list(text) == expected


def test_a_fractional_whole_number_is_refused_naming_it_and_floats_read_as_floats():
    with pytest.raises(ValueError, match=r"^'2\.5' is not a whole number$"):
        var_int("2.5")
    assert var_float("3e8") == 300_000_000.0 and var_float(0.5) == 0.5


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True), (False, False), ("True", True), ("false", False), (" TRUE ", True),
        ("", False), ("1", True), (1, True), ("yes", True), ("0", False), (0, False),
        ("no", False), ("No", False), (None, False), ("none", False),
    ],
)  # fmt: skip
def test_var_bool_reads_the_rendered_text(value, expected):
    """Guards against `"False"` read as true (a non-empty string): an incremental Python model
    would then copy a stale table's rows in a full build; and every spelling the docstring's
    yml can render (1 / 0, yes / no, an unset var rendered as None) read, not refused."""
    assert var_bool(value) is expected


def test_var_bool_refuses_other_text():
    with pytest.raises(ValueError, match="is not true or false"):
        var_bool("maybe")
