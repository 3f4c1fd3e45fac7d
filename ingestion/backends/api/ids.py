"""Identifiers that become file names (image files, prompt and question ids).

An id is accepted only if it is 1-128 characters of [A-Za-z0-9._-], does not start with '.' or
'-', and holds no '..' (the bundle's id rule, `ingestion.bundle.format.is_safe_id`): so no id can
name an absolute path, a parent folder, a hidden file, a separator, a NUL byte or a drive letter.
"""

from __future__ import annotations

from ingestion.bundle.format import is_safe_id


class UnsafeIdError(ValueError):
    pass


def validate_id(value: object, what: str = "id") -> str:
    if not is_safe_id(value):
        raise UnsafeIdError(f"{what} {value!r} is not a safe identifier ([A-Za-z0-9._-], 1-128)")
    return value
