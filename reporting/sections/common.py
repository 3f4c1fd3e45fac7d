"""Number formats shared by the sections (points with two decimals, fractions as percent)."""

from __future__ import annotations


def points(value: float | None, decimals: int = 2) -> str:
    return "–" if value is None else f"{value:.{decimals}f}"


def percent(fraction: float | None, decimals: int = 1) -> str:
    return "–" if fraction is None else f"{100 * fraction:.{decimals}f}%"


def signed(value: float | None, decimals: int = 2) -> str:
    """With its sign; a figure that rounds to zero is written 0, not +0 or -0."""
    if value is None:
        return "–"
    text = f"{value:+.{decimals}f}"
    return text[1:] if float(text) == 0 else text


def count(value: int | float | None) -> str:
    return "–" if value is None else f"{round(value):,}"


def spans(keys: list[str]) -> list[tuple[str, int]]:
    """Runs of equal consecutive keys as (key, length): the group headers of a heatmap."""
    runs: list[tuple[str, int]] = []
    for key in keys:
        if runs and runs[-1][0] == key:
            runs[-1] = (key, runs[-1][1] + 1)
        else:
            runs.append((key, 1))
    return runs
