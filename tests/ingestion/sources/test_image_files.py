"""`image_files.read_image_info`: the format and size of a PNG, JPEG or WebP read from its bytes
(the sources may not import PIL), held equal to what PIL reads for the files PIL writes, and every
broken file refused with its reason."""

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
def test_the_size_is_what_pil_reads(fmt, mode, options):
    for size in SIZES:
        data = saved(noise(size, mode), fmt, **options)
        expected = ImageInfo({"WEBP": "WebP"}.get(fmt, fmt), *Image.open(io.BytesIO(data)).size)
        assert read_image_info(data) == expected


@pytest.mark.parametrize(("fmt", "mode", "options"), WRITTEN)
def test_a_truncated_file_is_refused(fmt, mode, options):
    data = saved(noise((64, 48), mode), fmt, **options)
    for cut in (len(data) - 1, len(data) // 2, 30, 8):
        with pytest.raises(UnreadableImage):
            read_image_info(data[:cut])


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(width: int, height: int, raw: bytes, interlace: int = 0) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, interlace)  # 8-bit grey
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


def test_an_interlaced_png_is_read_by_its_seven_passes():
    # 10x3 grey, Adam7: passes of 2x1, 1x1, none, 2x1, 5x1, 5x2 and 10x1 pixels (a filter byte
    # before each row): 3 + 2 + 0 + 3 + 6 + 12 + 11 bytes
    data = png(10, 3, bytes(37), interlace=1)
    Image.open(io.BytesIO(data)).load()  # PIL reads it whole
    assert read_image_info(data) == ImageInfo("PNG", 10, 3)
    with pytest.raises(UnreadableImage, match="holds 36 bytes, its size needs 37"):
        read_image_info(png(10, 3, bytes(36), interlace=1))


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"GIF89a" + bytes(20), "not a PNG, JPEG or WebP file"),
        (png(4, 2, bytes(9)), "PNG image data holds 9 bytes, its size needs 10"),
        (png(4, 2, bytes(11)), "PNG image data holds more than the 10 bytes its size needs"),
        (png(4, 2, bytes(10))[:-1] + b"\x00", "PNG chunk IEND fails its CRC check"),
        (
            b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 0, 2, 8, 0, 0, 0, 0)),
            "PNG of size 0x2",
        ),
        (
            b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 3, 2, 0, 0, 0)),
            "PNG of colour type 2 with bit depth 3",
        ),
        (
            b"\x89PNG\r\n\x1a\n" + chunk(b"IDAT", b"") + chunk(b"IEND", b""),
            "PNG starts with chunk IDAT, not IHDR",
        ),
        (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", b"not zlib")
            + chunk(b"IEND", b""),
            "PNG image data does not inflate (Error -3 while decompressing data: incorrect"
            " header check)",
        ),
        (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 3, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(2)))
            + chunk(b"IEND", b""),
            "palette PNG without its palette (no PLTE chunk)",
        ),
        (
            b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(2))[:-3])
            + chunk(b"IEND", b""),
            "truncated PNG image data (its zlib stream does not end)",
        ),
        (b"\xff\xd8\xff\xd9", "JPEG without image data (no frame header or no scan)"),
        (
            b"\xff\xd8\xff\xc3\x00\x0b\x08\x00\x02\x00\x02\x01\x01\x11\x00\xff\xd9",
            "JPEG coding SOF3 (only baseline, extended and progressive JPEGs)",
        ),
        (
            b"\xff\xd8\xff\xc0\x00\x0b\x08\x00\x00\x00\x02\x01\x01\x11\x00\xff\xd9",
            "JPEG frame of size 2x0",
        ),
        (b"\xff\xd8\xff\xda\x00\x02\x00\xff\xd9", "JPEG scan before its frame header"),
        (b"\xff\xd8\x00", "JPEG holds no marker at byte 2"),
        (b"RIFF\x04\x00\x00\x00WEBP", "WebP without chunks"),
        (
            b"RIFF\x10\x00\x00\x00WEBP",
            "truncated WebP (the file ends at byte 12, its header says 24)",
        ),
        (
            b"RIFF\x0c\x00\x00\x00WEBPVP8 \x08\x00\x00\x00",
            "truncated WebP (chunk VP8  runs past the RIFF data)",
        ),
        (
            b"RIFF\x16\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x02" + bytes(9),
            "an animated WebP (one still image per prompt)",
        ),
        (
            b"RIFF\x16\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00" + bytes(10),
            "WebP without image data (no VP8 or VP8L chunk)",
        ),
        (
            b"RIFF\x0e\x00\x00\x00WEBPVP8L\x02\x00\x00\x00\x00\x00",
            "WebP VP8L chunk without its signature",
        ),
    ],
)
def test_a_broken_file_is_refused_with_its_reason(data, reason):
    with pytest.raises(UnreadableImage) as refused:
        read_image_info(data)
    assert str(refused.value) == reason


def test_a_vp8x_canvas_must_be_its_frame_s_size():
    data = saved(noise((16, 8), "RGBA"), "WEBP")  # VP8X, ALPH, VP8
    assert data[12:16] == b"VP8X"
    bigger = data[:24] + (31).to_bytes(3, "little") + data[27:]  # canvas 32 wide
    with pytest.raises(UnreadableImage, match="WebP frame of 16x8 on a canvas of 32x8"):
        read_image_info(bigger)
