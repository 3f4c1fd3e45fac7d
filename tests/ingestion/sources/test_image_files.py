"""`image_files.read_image_info`: the format and size of a PNG, JPEG or WebP as Pillow reads them
from an open file, every file Pillow writes accepted, and every broken file (truncated, a flipped
byte, an animation, another format) refused with its reason. The expected formats and sizes are
the ones each file was written with."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image

from ingestion.sources.image_files import ImageInfo, UnreadableImage, read_image_info

SIZES = [(1, 1), (37, 23), (17, 1), (1, 9), (640, 480)]


def noise(size: tuple[int, int], mode: str = "RGB") -> Image.Image:
    pixels = bytes((i * 7919 + i // 3) % 251 for i in range(3 * size[0] * size[1]))
    image = Image.frombytes("RGB", size, pixels).convert(mode)
    if mode in ("RGBA", "LA"):
        image.putalpha(128)  # an alpha channel worth keeping (a WebP's VP8X and ALPH chunks)
    return image


def saved(image: Image.Image, fmt: str, **options) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def info(data: bytes) -> ImageInfo:
    return read_image_info(io.BytesIO(data))


WRITTEN = [
    *[("PNG", mode, {}) for mode in ("RGB", "RGBA", "L", "LA", "P", "1", "I;16")],
    ("PNG", "RGB", {"optimize": True}),
    ("JPEG", "RGB", {}),
    ("JPEG", "RGB", {"progressive": True}),
    ("JPEG", "RGB", {"optimize": True, "quality": 5}),
    ("JPEG", "L", {}),
    ("JPEG", "CMYK", {}),
    ("WEBP", "RGB", {}),
    ("WEBP", "RGB", {"lossless": True}),
    ("WEBP", "RGBA", {}),
    ("WEBP", "RGBA", {"lossless": True}),
    ("WEBP", "RGB", {"exif": b"Exif\x00\x00MM\x00*\x00\x00\x00\x08\x00\x00"}),
]


@pytest.mark.parametrize(("fmt", "mode", "options"), WRITTEN)
def test_the_format_and_size_are_the_ones_written(fmt, mode, options):
    """Guards against a format named wrongly (WebP, not Pillow's WEBP) or a size swapped."""
    for size in SIZES:
        data = saved(noise(size, mode), fmt, **options)
        assert info(data) == ImageInfo({"WEBP": "WebP"}.get(fmt, fmt), *size)


@pytest.mark.parametrize(("fmt", "mode", "options"), WRITTEN)
def test_a_file_cut_inside_its_image_data_is_refused(fmt, mode, options):
    """Guards against accepting a file whose header reads but whose pixels are missing (Pillow
    opens such a file lazily: only decoding finds the cut)."""
    data = saved(noise((64, 48), mode), fmt, **options)
    for cut in (len(data) // 2, 30, 8):
        with pytest.raises(UnreadableImage):
            info(data[:cut])


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(width: int, height: int, raw: bytes) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grey
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def test_a_png_with_a_flipped_byte_fails_its_crc():
    """Guards against a check that reads the header only: the flipped byte is in the pixels."""
    data = bytearray(saved(noise((64, 48)), "PNG"))
    data[60] ^= 0xFF  # inside the IDAT chunk
    with pytest.raises(UnreadableImage, match=r"not a whole image \(broken PNG file"):
        info(bytes(data))


def test_pixels_that_do_not_decode_are_refused():
    """A PNG whose IDAT inflates to fewer bytes than its 4 x 2 size needs (9 of 10): the
    structure is whole, only decoding finds it."""
    assert info(png(4, 2, bytes(10))) == ImageInfo("PNG", 4, 2)
    with pytest.raises(UnreadableImage, match=r"^PNG that does not decode"):
        info(png(4, 2, bytes(9)))


def test_an_animation_is_refused():
    """One still image per prompt: the judges would see only the first frame."""
    frames = [noise((8, 8)), noise((8, 8), "L").convert("RGB")]
    out = io.BytesIO()
    frames[0].save(out, "WEBP", save_all=True, append_images=frames[1:])
    with pytest.raises(UnreadableImage) as refused:
        info(out.getvalue())
    assert str(refused.value) == "an animated WebP (one still image per prompt)"


@pytest.mark.parametrize(
    "data",
    [b"GIF89a" + bytes(20), saved(noise((4, 4)), "GIF"), saved(noise((4, 4)), "BMP"), b"hello"],
)
def test_another_format_is_refused_with_its_reason(data):
    with pytest.raises(UnreadableImage) as refused:
        info(data)
    assert str(refused.value) == "not a PNG, JPEG or WebP file"
