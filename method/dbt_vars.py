"""dbt vars as dbt Python models receive them: the one parser.

A Python model reads a var through its config (`dbt.config.get`), where the yml renders it with
Jinja, so a list arrives as its Python repr (`"['en', 'zh']"`), a list given on the command line
may arrive as bare text (`"[a, b]"`), and a YAML number like `3e8` arrives as the string `"3e8"`.
"""

from __future__ import annotations

import ast


def var_list(value) -> list:
    """A list var: a repr (`"['a', 'b']"`), bare text (`"[a, b]"`, `"a, b"`) or a list; `None`
    and empty text give []."""
    if value is None:
        return []
    if not isinstance(value, str):
        return list(value)
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        parsed = None
    if isinstance(parsed, list | tuple):
        return list(parsed)
    return [item.strip(" '\"") for item in value.strip("[]").split(",") if item.strip(" '\"")]


def var_int(value) -> int:
    """A whole-number var; `"3e8"`-style text too."""
    try:
        return int(value)
    except ValueError:
        number = float(value)
        if not number.is_integer():
            raise ValueError(f"{value!r} is not a whole number") from None
        return int(number)


def var_float(value) -> float:
    return float(value)


def var_bool(value) -> bool:
    """A true/false var: a bool, or its text as the yml renders it (`"True"`, `"false"`)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no", "", "none"):
        return False
    raise ValueError(f"{value!r} is not true or false")
