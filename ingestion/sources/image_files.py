"""What a PNG, JPEG or WebP file holds: its format and size, read from its bytes, and whether its
structure is whole, without an image library.

`ingestion.sources` may not import PIL (pyproject.toml's import-linter contracts: pillow comes
with the `ml-cpu` / `gpu` extras, which `import ingestion` never needs), so an image folder drawn
elsewhere (`image_folder`) is checked here, from the bytes, before anything is judged. What is
checked, format by format:

- PNG: the signature, every chunk's length and CRC, an IHDR first (size, a valid bit depth and
  colour type), a palette for palette images, IDAT data that inflates to exactly the bytes the
  size needs (interlaced images by their seven Adam7 passes), and the IEND chunk;
- JPEG: the start-of-image marker, every segment's length, one baseline, extended or
  progressive frame header (SOF0-SOF2: what the judges' image readers open) with a size, a scan
  after it, and the end-of-image marker;
- WebP: the RIFF header and its length, every chunk's length, and the size from the VP8, VP8L or
  VP8X header (a VP8X canvas must hold one still frame of its own size: an animation is
  refused).

A truncated file, a flipped byte in a PNG, a frame header without a size or a file of another
format is `UnreadableImage`, with the reason. The compressed data of a JPEG or WebP is not
decoded: a file whose structure is whole but whose entropy-coded data is garbage passes here and
fails where it is decoded.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

PNG, JPEG, WEBP = "PNG", "JPEG", "WebP"

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# colour type -> (channels, allowed bit depths)
_PNG_COLOUR_TYPES = {
    0: (1, (1, 2, 4, 8, 16)),
    2: (3, (8, 16)),
    3: (1, (1, 2, 4, 8)),
    4: (2, (8, 16)),
    6: (4, (8, 16)),
}
# Adam7: (first column, first row, column step, row step) of each pass
_ADAM7 = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2))
_ADAM7 += ((0, 1, 1, 2),)
_INFLATE_STEP = 1 << 20  # inflated at most this many bytes at a time (a zlib bomb stops early)
_MAX_SIDE = 2**31 - 1  # PNG's limit on a side; JPEG and WebP sides are smaller by format

# JPEG frame headers: SOF0-SOF15 less DHT (C4), JPG (C8) and DAC (CC)
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_JPEG_OPENED = {0xC0: "baseline", 0xC1: "extended", 0xC2: "progressive"}
_JPEG_STANDALONE = frozenset(range(0xD0, 0xD8)) | {0x01}  # RSTn, TEM: no length follows
_JPEG_SOS, _JPEG_EOI = 0xDA, 0xD9

_WEBP_FRAMES = (b"VP8 ", b"VP8L")
_VP8X_ANIMATION = 0x02


class UnreadableImage(ValueError):
    """The file is no whole PNG, JPEG or WebP image; the message says why."""


@dataclass(frozen=True)
class ImageInfo:
    format: str  # PNG, JPEG or WEBP
    width: int
    height: int


def read_image_info(data: bytes) -> ImageInfo:
    """The format and size of the image `data` holds, or UnreadableImage saying what is wrong."""
    if data.startswith(_PNG_SIGNATURE):
        return ImageInfo(PNG, *_png_size(data))
    if data.startswith(b"\xff\xd8"):
        return ImageInfo(JPEG, *_jpeg_size(data))
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ImageInfo(WEBP, *_webp_size(data))
    raise UnreadableImage("not a PNG, JPEG or WebP file")


# --------------------------------------------------------------------------------------------------
# PNG
# --------------------------------------------------------------------------------------------------


def _png_size(data: bytes) -> tuple[int, int]:
    position, header, palette, idat = len(_PNG_SIGNATURE), None, False, []
    while True:
        if position + 8 > len(data):
            raise UnreadableImage("truncated PNG (the file ends before its IEND chunk)")
        length, kind = struct.unpack(">I4s", data[position : position + 8])
        name = kind.decode("ascii", "replace")
        end = position + 12 + length
        if end > len(data):
            raise UnreadableImage(f"truncated PNG (chunk {name} runs past the end of the file)")
        body = data[position + 8 : end - 4]
        if zlib.crc32(kind + body) != int.from_bytes(data[end - 4 : end], "big"):
            raise UnreadableImage(f"PNG chunk {name} fails its CRC check")
        if header is None and kind != b"IHDR":
            raise UnreadableImage(f"PNG starts with chunk {name}, not IHDR")
        if kind == b"IHDR":
            if header is not None:
                raise UnreadableImage("PNG holds a second IHDR chunk")
            header = _png_header(body)
        elif kind == b"PLTE":
            palette = True
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        position = end
    width, height, depth, colour, interlaced = header
    if colour == 3 and not palette:
        raise UnreadableImage("palette PNG without its palette (no PLTE chunk)")
    if not idat:
        raise UnreadableImage("PNG without image data (no IDAT chunk)")
    channels = _PNG_COLOUR_TYPES[colour][0]
    _check_inflated_length(
        b"".join(idat), _png_data_length(width, height, depth * channels, interlaced)
    )
    return width, height


def _png_header(body: bytes) -> tuple[int, int, int, int, bool]:
    if len(body) != 13:
        raise UnreadableImage(f"PNG IHDR chunk of {len(body)} bytes, not 13")
    width, height, depth, colour, compression, filtering, interlace = struct.unpack(
        ">IIBBBBB", body
    )
    if not (0 < width <= _MAX_SIDE and 0 < height <= _MAX_SIDE):
        raise UnreadableImage(f"PNG of size {width}x{height}")
    if colour not in _PNG_COLOUR_TYPES or depth not in _PNG_COLOUR_TYPES[colour][1]:
        raise UnreadableImage(f"PNG of colour type {colour} with bit depth {depth}")
    if compression or filtering or interlace not in (0, 1):
        raise UnreadableImage(
            f"PNG with compression {compression}, filter {filtering}, interlace {interlace}"
        )
    return width, height, depth, colour, interlace == 1


def _png_data_length(width: int, height: int, bits_per_pixel: int, interlaced: bool) -> int:
    """The inflated IDAT bytes an image of this size holds: per row, a filter byte and the row's
    pixels; an interlaced image as its seven Adam7 passes, each a smaller image (or none)."""

    def image(columns: int, rows: int) -> int:
        return rows * (1 + (columns * bits_per_pixel + 7) // 8) if columns and rows else 0

    if not interlaced:
        return image(width, height)
    return sum(
        image((width - x + dx - 1) // dx, (height - y + dy - 1) // dy) for x, y, dx, dy in _ADAM7
    )


def _check_inflated_length(stream: bytes, expected: int) -> None:
    inflater, total, pending = zlib.decompressobj(), 0, stream
    try:
        while True:
            out = inflater.decompress(pending, _INFLATE_STEP)
            total += len(out)
            if total > expected:
                raise UnreadableImage(
                    f"PNG image data holds more than the {expected:,} bytes its size needs"
                )
            pending = inflater.unconsumed_tail
            if not out and not pending:
                break
    except zlib.error as error:
        raise UnreadableImage(f"PNG image data does not inflate ({error})") from None
    if not inflater.eof:
        raise UnreadableImage("truncated PNG image data (its zlib stream does not end)")
    if total != expected:
        raise UnreadableImage(f"PNG image data holds {total:,} bytes, its size needs {expected:,}")


# --------------------------------------------------------------------------------------------------
# JPEG
# --------------------------------------------------------------------------------------------------


def _jpeg_size(data: bytes) -> tuple[int, int]:
    position, size, scans = 2, None, 0
    truncated = UnreadableImage("truncated JPEG (the file ends before its end-of-image marker)")
    while True:
        if position >= len(data):
            raise truncated
        if data[position] != 0xFF:
            raise UnreadableImage(f"JPEG holds no marker at byte {position:,}")
        while position < len(data) and data[position] == 0xFF:  # fill bytes before a marker
            position += 1
        if position >= len(data):
            raise truncated
        marker = data[position]
        position += 1
        if marker == _JPEG_EOI:
            break
        if marker in _JPEG_STANDALONE:
            continue
        if position + 2 > len(data):
            raise truncated
        length = int.from_bytes(data[position : position + 2], "big")
        end = position + length
        if length < 2 or end > len(data):
            raise UnreadableImage(
                f"truncated JPEG (segment FF{marker:02X} runs past the end of the file)"
            )
        if marker in _JPEG_FRAMES:
            if size is not None:
                raise UnreadableImage("JPEG holds a second frame header")
            size = _jpeg_frame(marker, data[position + 2 : end])
        position = end
        if marker == _JPEG_SOS:
            if size is None:
                raise UnreadableImage("JPEG scan before its frame header")
            scans += 1
            position = _jpeg_scan_end(data, position, truncated)
    if size is None or not scans:
        raise UnreadableImage("JPEG without image data (no frame header or no scan)")
    return size


def _jpeg_frame(marker: int, body: bytes) -> tuple[int, int]:
    if marker not in _JPEG_OPENED:
        raise UnreadableImage(
            f"JPEG coding SOF{marker - 0xC0} (only baseline, extended and progressive JPEGs)"
        )
    if len(body) < 6:
        raise UnreadableImage(f"JPEG frame header of {len(body)} bytes")
    height, width = struct.unpack(">HH", body[1:5])
    if not (width and height):
        raise UnreadableImage(f"JPEG frame of size {width}x{height}")
    return width, height


def _jpeg_scan_end(data: bytes, position: int, truncated: UnreadableImage) -> int:
    """The position of the marker after a scan's entropy-coded data, in which FF is followed by
    a stuffed 00 or a restart marker."""
    while True:
        position = data.find(b"\xff", position)
        if position < 0 or position + 1 >= len(data):
            raise truncated
        following = data[position + 1]
        if following == 0xFF:  # a fill byte: the marker starts at the next FF
            position += 1
        elif following == 0x00 or 0xD0 <= following <= 0xD7:
            position += 2
        else:
            return position


# --------------------------------------------------------------------------------------------------
# WebP
# --------------------------------------------------------------------------------------------------


def _webp_size(data: bytes) -> tuple[int, int]:
    end = 8 + int.from_bytes(data[4:8], "little")
    if end > len(data):
        raise UnreadableImage(
            f"truncated WebP (the file ends at byte {len(data):,}, its header says {end:,})"
        )
    chunks, position = [], 12
    while position < end:
        if position + 8 > end:
            raise UnreadableImage("truncated WebP (a chunk header runs past the RIFF data)")
        kind, length = (
            data[position : position + 4],
            int.from_bytes(data[position + 4 : position + 8], "little"),
        )
        body_end = position + 8 + length
        if body_end > end:
            name = kind.decode("ascii", "replace")
            raise UnreadableImage(f"truncated WebP (chunk {name} runs past the RIFF data)")
        chunks.append((kind, data[position + 8 : body_end]))
        position = body_end + (length & 1)  # chunks are padded to an even length
    if not chunks:
        raise UnreadableImage("WebP without chunks")
    kind, body = chunks[0]
    if kind in _WEBP_FRAMES:
        return _webp_frame(kind, body)
    if kind != b"VP8X":
        raise UnreadableImage(f"WebP starts with chunk {kind.decode('ascii', 'replace')}")
    if len(body) < 10:
        raise UnreadableImage(f"WebP VP8X chunk of {len(body)} bytes")
    if body[0] & _VP8X_ANIMATION:
        raise UnreadableImage("an animated WebP (one still image per prompt)")
    canvas = (int.from_bytes(body[4:7], "little") + 1, int.from_bytes(body[7:10], "little") + 1)
    frames = [(kind, body) for kind, body in chunks[1:] if kind in _WEBP_FRAMES]
    if not frames:
        raise UnreadableImage("WebP without image data (no VP8 or VP8L chunk)")
    frame = _webp_frame(*frames[0])
    if frame != canvas:
        raise UnreadableImage(
            f"WebP frame of {frame[0]}x{frame[1]} on a canvas of {canvas[0]}x{canvas[1]}"
        )
    return canvas


def _webp_frame(kind: bytes, body: bytes) -> tuple[int, int]:
    if kind == b"VP8 ":  # lossy: a key frame's tag, start code, 14-bit width and height
        if len(body) < 10 or body[3:6] != b"\x9d\x01\x2a" or body[0] & 1:
            raise UnreadableImage("WebP VP8 chunk without a key frame header")
        width, height = struct.unpack("<HH", body[6:10])
        width, height = width & 0x3FFF, height & 0x3FFF
    else:  # lossless: a signature byte, then width - 1, height - 1 in 14 bits each, a version
        if len(body) < 5 or body[0] != 0x2F:
            raise UnreadableImage("WebP VP8L chunk without its signature")
        bits = int.from_bytes(body[1:5], "little")
        if bits >> 29:
            raise UnreadableImage(f"WebP VP8L version {bits >> 29}")
        width, height = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if not (width and height):
        raise UnreadableImage(f"WebP frame of size {width}x{height}")
    return width, height
