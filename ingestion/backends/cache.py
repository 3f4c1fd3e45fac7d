"""Cache keys for model calls (as lm-eval-harness keys its request cache): a SHA-256 over the
normalised request, the backend, the model and its revision, and the seed."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import unicodedata
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
