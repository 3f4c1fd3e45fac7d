"""The image store: PNG files addressed by safe ids (`ingestion.backends.api.ids`), every path
checked again to resolve inside the store.
"""

from __future__ import annotations

import os
from pathlib import Path

from ingestion.backends.api.ids import UnsafeIdError, validate_id


class ImageStore:
    """PNG files at <root>/<model_id>/<prompt_id>__s<seed>.png."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def relative_path(self, model_id: str, prompt_id: str, seed: int) -> Path:
        validate_id(model_id, "model_id")
        validate_id(prompt_id, "prompt_id")
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise UnsafeIdError(f"seed {seed!r} must be a non-negative integer")
        return Path(model_id) / f"{prompt_id}__s{seed}.png"

    def path(self, model_id: str, prompt_id: str, seed: int) -> Path:
        path = self.root / self.relative_path(model_id, prompt_id, seed)
        root = self.root.resolve()
        if root not in path.resolve().parents:  # defence in depth: symlinks, odd roots
            raise UnsafeIdError(f"{path} escapes the image store {root}")
        return path

    def exists(self, model_id: str, prompt_id: str, seed: int) -> bool:
        return self.path(model_id, prompt_id, seed).is_file()

    def write_png(self, image, model_id: str, prompt_id: str, seed: int) -> Path:
        """Write atomically (temporary file, then rename), so a crash never leaves half a PNG."""
        path = self.path(model_id, prompt_id, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        image.save(partial, format="PNG")
        os.replace(partial, path)
        return path
