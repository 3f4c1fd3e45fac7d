"""Reading a judged image from disk: the one home of how both judges decode an image file."""

from __future__ import annotations


def load_rgb(path: str):
    """The image at `path`, decoded as RGB (PIL raises on a file that is not an image)."""
    from PIL import Image

    with Image.open(path) as opened:
        return opened.convert("RGB")
