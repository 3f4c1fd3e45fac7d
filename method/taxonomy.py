"""The capability taxonomy (`seeds/capabilities.csv`): the one reader every layer uses.

Nothing assumes how many capabilities or groups there are: capabilities come in reporting order
(group order, then capability order), groups in the order their first capability appears.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

# Reporting order of the seed's rows: by group, then capability (the name breaks ties).
_ORDER = ("group_order", "capability_order")


@dataclass(frozen=True)
class Taxonomy:
    """Capabilities in reporting order, each one's group key, and each group's display name."""

    capabilities: tuple[str, ...]
    capability_groups: tuple[str, ...]
    group_names: tuple[str, ...] = ()  # aligned with `groups`; empty = the keys themselves

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping]) -> Taxonomy:
        """From rows with `capability`, `group_key`, `group_order`, `capability_order` and
        optionally `group_name` (seed rows, Arrow rows, or CSV rows whose orders are text)."""
        rows = sorted(rows, key=lambda r: (*(int(r[k]) for k in _ORDER), r["capability"]))
        names = {r["group_key"]: r.get("group_name") or r["group_key"] for r in rows}
        return cls(
            capabilities=tuple(r["capability"] for r in rows),
            capability_groups=tuple(r["group_key"] for r in rows),
            group_names=tuple(names.values()),
        )

    @classmethod
    def from_arrow(cls, table) -> Taxonomy:
        """From the seed as an Arrow table (what a dbt Python model gets from `dbt.ref`)."""
        return cls.from_rows(table.to_pylist())

    @classmethod
    def from_csv(cls, path: Path) -> Taxonomy:
        with path.open(encoding="utf-8") as f:
            return cls.from_rows(csv.DictReader(f))

    @cached_property
    def groups(self) -> tuple[str, ...]:
        """Group keys in reporting order."""
        return tuple(dict.fromkeys(self.capability_groups))

    @cached_property
    def group_of(self) -> dict[str, str]:
        return dict(zip(self.capabilities, self.capability_groups, strict=True))

    def members(self, group: str) -> tuple[str, ...]:
        """The capabilities of `group`, in reporting order."""
        return tuple(c for c in self.capabilities if self.group_of[c] == group)
