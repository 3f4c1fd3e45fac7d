"""What a PNG, JPEG or WebP file holds: its format and size, and whether Pillow decodes every
pixel of it, read from a file the caller opened (`image_folder` opens it once, without following
links, and copies what was checked from the same descriptor).

Pillow reads these formats as the judges do (`ingestion.backends.models.images`), so a file
accepted here is one the judges can open; the sources may import PIL (pyproject.toml's contract,
README "Module map"). What is checked: Pillow knows the file as a PNG, JPEG or WebP (by its
bytes, not its name); `verify` walks its structure (a PNG's chunk CRCs); `load` decodes every
pixel (a truncated file, entropy-coded data that is garbage); it holds one still frame (an
animated WebP or PNG is refused: one image per prompt). An image beyond Pillow's decompression
bomb limit is refused too. A failure is `UnreadableImage`, with Pillow's reason.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import BinaryIO

from PIL import Image, UnidentifiedImageError

PNG, JPEG, WEBP = "PNG", "JPEG", "WebP"
_FORMAT_OF = {"PNG": PNG, "JPEG": JPEG, "WEBP": WEBP}  # Pillow's name -> ours


class UnreadableImage(ValueError):
    """The file is no whole PNG, JPEG or WebP image; the message says why."""


@dataclass(frozen=True)
class ImageInfo:
    format: str  # PNG, JPEG or WebP
    width: int
    height: int


def read_image_info(handle: BinaryIO) -> ImageInfo:
    """The format and size of the image in the open binary file `handle` (read from its start),
    or UnreadableImage saying what is wrong. `handle` is left open, at no particular position."""
    with warnings.catch_warnings():
        # a large image is a warning to Pillow; beyond twice the limit it is an error (refused)
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        info = _header(handle)
        _decode(handle, info.format)
    return info


def _header(handle: BinaryIO) -> ImageInfo:
    """The format and size Pillow reads from the file's header, its structure verified."""
    handle.seek(0)
    try:
        with Image.open(handle, formats=tuple(_FORMAT_OF)) as image:
            info = ImageInfo(_FORMAT_OF[image.format], *image.size)
            frames = getattr(image, "n_frames", 1)
            image.verify()
    except UnidentifiedImageError:
        raise UnreadableImage("not a PNG, JPEG or WebP file") from None
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as error:
        raise UnreadableImage(f"not a whole image ({_reason(error)})") from None
    if frames > 1:
        raise UnreadableImage(f"an animated {info.format} (one still image per prompt)")
    return info


def _decode(handle: BinaryIO, format_: str) -> None:
    """Every pixel decoded (verify does not decode a JPEG's or WebP's compressed data)."""
    handle.seek(0)
    try:
        with Image.open(handle, formats=tuple(_FORMAT_OF)) as image:
            image.load()
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as error:
        raise UnreadableImage(f"{format_} that does not decode ({_reason(error)})") from None


def _reason(error: Exception) -> str:
    return str(error) or type(error).__name__
