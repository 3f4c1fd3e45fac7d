"""Reading a judged image from disk: the one home of how both judges decode an image file."""

from __future__ import annotations

import os


def load_rgb(path: str):
    """The image at `path`, decoded as RGB (PIL raises on a file that is not an image). The file
    is opened once, without following a link (O_NOFOLLOW; OSError ELOOP on a link), and that
    open file is what PIL decodes: the runs hand the path their check resolved
    (`drivers.runs.checked_image_path`), so a link put in its place since is refused, never read."""
    from PIL import Image

    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(descriptor, "rb") as handle, Image.open(handle) as opened:
        return opened.convert("RGB")
