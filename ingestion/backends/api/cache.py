"""Cache keys for model calls (as lm-eval-harness keys its request cache): a SHA-256 over the
normalised request, the backend, the model and its revision, and the seed."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import unicodedata
from pathlib import Path
from typing import Any


def normalise(value: Any) -> Any:
    """Strings NFC-normalised, stripped, inner whitespace collapsed; dataclasses and mappings
    recursively; tuples as lists; floats rounded to 12 significant digits."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, str):
        return " ".join(unicodedata.normalize("NFC", value).split())
    if isinstance(value, dict):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalise(v) for v in value]
    if isinstance(value, float):
        return float(f"{value:.12g}")
    return value


def cache_key(request: Any, backend: str, model: str, revision: str, seed: int | None) -> str:
    payload = {
        "request": normalise(request),
        "backend": backend,
        "model": model,
        "revision": revision,
        "seed": seed,
    }
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def local_revision(folder: Path) -> str:
    """'local-<sha256 of the folder's config files>' for a model saved on disk."""
    digest = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*.json")):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(path.read_bytes())
    return "local-" + digest.hexdigest()[:12]


def resolve_revision(source: str, pinned: str | None, commit: str | None = None) -> str:
    """The revision a cache key and a bundle row record: the pinned one, else a hash of a local
    folder's configs, else the hub commit the loader reports, else 'unknown'."""
    if pinned:
        return pinned
    if Path(source).is_dir():
        return local_revision(Path(source))
    return commit or "unknown"
