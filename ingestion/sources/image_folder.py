"""Images drawn elsewhere (`qct2i evaluate MODEL_ID --images DIR`, issues 25 and 32): a folder
holding `<prompt_id>.png` (or `.jpg`, `.jpeg`, `.webp`), one image per prompt, and optionally
`meta.jsonl`, read and checked as a whole (`read_image_folder`), then put into a bundle folder as
the generation asset puts the images it draws (`add_folder_images`), for the judging assets to
read.

The folder is refused before anything is judged, with every problem listed as `<file>: <reason>`
(`meta.jsonl:<line>: <reason>` for a line of meta.jsonl; `<prompt_id>.*` for an image that is
not there), in file and line order, in one `ImageFolderError`, the `BundleError` the command line
prints without a traceback:

- a file not named after a prompt of the evaluation, a prompt without an image, two images of
  one prompt (`a.png` and `a.jpg`);
- a file that is not an image by its extension (the extension's case does not matter), a
  sub-folder, anything else that is not a regular file;
- a symbolic link (an image is copied into the bundle, never linked): one leading outside the
  folder says where it resolves to;
- an empty file, and one that is no whole PNG, JPEG or WebP image (`image_files`, with Pillow:
  truncated, a PNG failing its CRC, pixels that do not decode, an animated WebP, another
  format), or holds another format than its extension names (a JPEG named `.png`);
- an image whose size (as Pillow reads it) differs from what meta.jsonl says;
- in meta.jsonl: a line that is not JSON (a key twice, NaN), not an object, names no prompt of
  the evaluation or one named before, holds a key the file does not know, or a value of the
  wrong type or range (`seed` an integer; `width`, `height`, `gpus` positive integers; `latency_s`
  a non-negative number; `width` and `height` both or neither, and so `latency_s` and `gpus`).

Names starting with `.` are ignored (`.DS_Store`, macOS's `._a.png`, `.ipynb_checkpoints`):
operating systems and tools leave them beside the files a user put there.

meta.jsonl is optional, and so is a line for an image (CONTRACTS "Additions of the open issues",
unknown cost): images drawn elsewhere usually come without their latency and GPU count, and an
image without both is stored with both unknown (null), never a guessed 0 or 1, which would
publish a made-up "measured" cost. The generator's cost is then `unknown` (`int_generators.sql`):
its quality marts are complete, and routing, which ranks generators by cost, leaves it out with
the reason (`fct_router_excluded_generators`). `seed` and the size stay optional too.

An image is opened once, without following a link (O_NOFOLLOW), to be checked, and once more to
be copied, where the copy is checked again from the descriptor it is read from and written to a
`.partial` file created anew (O_CREAT | O_EXCL | O_NOFOLLOW): a link put in the folder, or beside
the copy, after the folder was listed is refused, never followed.

In the bundle an image becomes `images/<model_id>/<prompt_id><ext>` (the extension in lower case),
a copy of the file, and one `images.jsonl` row: `image_id` as the generation asset forms it,
`<model_id>__<prompt_id>__s<seed>`, or `<model_id>__<prompt_id>` for an image without a seed;
width and height from the file; `latency_s`, `gpus` and `seed` from meta.jsonl; `backend`
`image_folder` (drawn elsewhere, handed over as a folder); `source_file`, the file's name in the
folder (provenance: the import ignores columns the contract does not know). Rows are appended
with the generation asset's appender (`ingestion.bundle.jsonl_append`, keyed by image_id, under
its lock), so adding the same folder again writes nothing; a bundle that already holds another
image of one of the prompts for the model (another image_id, other values, other bytes) is
refused before anything is copied, since its judgments would be of the other image.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import shutil
import stat
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from ingestion.bundle import BundleError, Problem
from ingestion.bundle.format import SAFE_ID_RULE, is_safe_id
from ingestion.bundle.jsonl_append import append_rows, read_rows
from ingestion.sources.image_files import (
    JPEG,
    PNG,
    WEBP,
    ImageInfo,
    UnreadableImage,
    read_image_info,
)

META_FILE = "meta.jsonl"
# The file whoever drops a folder writes last to say it is whole (the inbox's READY,
# dagster_defs/inbox.py): part of no evaluation, passed over like a dotfile.
COMPLETION_MARKER = "READY"
BACKEND = "image_folder"  # images.backend of an image drawn elsewhere
IMAGE_EXTENSIONS = {".png": PNG, ".jpg": JPEG, ".jpeg": JPEG, ".webp": WEBP}
META_KEYS = ("prompt_id", "seed", "width", "height", "latency_s", "gpus")
_EXTENSION_OF = {PNG: ".png", JPEG: ".jpg", WEBP: ".webp"}
_INT64 = 2**63
_NO_LINK = getattr(os, "O_NOFOLLOW", 0)  # every open of an image or of meta.jsonl


class ImageFolderError(BundleError):
    """An image folder was refused; `problems` lists every problem, in file and line order."""

    def __init__(self, folder: Path, problems: list[Problem]):
        self.folder = folder
        self.problems = problems
        listed = "\n".join(str(problem) for problem in problems)
        Exception.__init__(
            self, f"images folder {folder} refused ({len(problems)} problems):\n{listed}"
        )


@dataclass(frozen=True)
class FolderImage:
    """One image of the folder, checked: its prompt, its file, its size as read from the file,
    and what meta.jsonl says of its draw (latency and GPUs None: not said, the cost unknown)."""

    prompt_id: str
    path: Path  # the file in the folder
    width: int
    height: int
    latency_s: float | None
    gpus: int | None
    seed: int | None = None

    @property
    def extension(self) -> str:
        return self.path.suffix.lower()


@dataclass(frozen=True)
class _Meta:
    """A line of meta.jsonl that names a prompt of the evaluation: its valid values (less
    prompt_id) and every key it gives, valid or not."""

    line: int
    values: dict
    given: frozenset[str]


def read_image_folder(folder: Path, prompt_ids: Collection[str]) -> list[FolderImage]:
    """The image of every prompt of `prompt_ids` in `folder`, ordered by prompt id, or
    ImageFolderError listing every problem of the folder and its meta.jsonl."""
    folder, wanted = Path(folder), set(prompt_ids)
    root, names = _listing(folder)
    problems: list[Problem] = []
    files: dict[str, list[str]] = defaultdict(list)  # prompt id -> the image files named after it
    sizes: dict[str, tuple[int, int]] = {}  # file -> its size, for the images that read whole
    meta_usable = False
    for name in names:
        if name.startswith(".") or name == COMPLETION_MARKER:
            continue
        entry, shown = root / name, _shown(name)
        extension = os.path.splitext(name)[1].lower()
        reason = _entry_problem(entry, root)
        if name == META_FILE:
            meta_usable = reason is None
        elif extension in IMAGE_EXTENSIONS:
            prompt = name[: -len(extension)]
            files[prompt].append(name)
            if prompt not in wanted:
                unknown = f"no prompt {_shown(prompt)} in this evaluation"
                problems.append(Problem(shown, None, unknown))
            if reason is None:
                size, reason = _image_size(entry, IMAGE_EXTENSIONS[extension], extension)
                if size is not None:
                    sizes[name] = size
        elif reason is None:
            reason = f"not an image ({', '.join(IMAGE_EXTENSIONS)}) nor {META_FILE}"
        if reason is not None:
            problems.append(Problem(shown, None, reason))
    meta = _read_meta(root / META_FILE, wanted, problems) if meta_usable else {}
    images = []
    for prompt in sorted(wanted):
        named = sorted(files.get(prompt, ()))
        if not named:
            problems.append(Problem(f"{prompt}.*", None, f"no image for prompt {_shown(prompt)}"))
            continue
        if len(named) > 1:
            listed = ", ".join(_shown(name) for name in named)
            reason = f"one of {len(named)} images for prompt {_shown(prompt)} ({listed}); keep one"
            problems += [Problem(_shown(name), None, reason) for name in named]
        line = meta.get(prompt)
        sized = [_size_as_said(name, sizes.get(name), line, problems) for name in named]
        if len(named) == 1 and sized[0]:
            images.append(_folder_image(prompt, root / named[0], sizes[named[0]], line))
    if problems:
        raise ImageFolderError(folder, sorted(set(problems), key=_problem_order))
    return images


def _folder_image(
    prompt: str, path: Path, size: tuple[int, int], line: _Meta | None
) -> FolderImage:
    """The checked image; without its meta.jsonl line (or its figures) its cost is unknown."""
    said = line.values if line is not None else {}
    latency = said.get("latency_s")
    return FolderImage(
        prompt,
        path,
        *size,
        latency_s=float(latency) if latency is not None else None,
        gpus=said.get("gpus"),
        seed=said.get("seed"),
    )


def add_folder_images(images: Sequence[FolderImage], model_id: str, bundle: Path) -> int:
    """Copy each image into `bundle`/images/`model_id`/ and append its row to images.jsonl;
    returns the rows written (0 when the bundle already holds every image). Refused with a
    BundleError, before anything is written, where the bundle holds another image of one of the
    prompts for `model_id`."""
    if not is_safe_id(model_id):
        raise ValueError(f"model_id {model_id!r} is not a safe identifier ({SAFE_ID_RULE})")
    prompts = [image.prompt_id for image in images]
    if len(set(prompts)) < len(prompts):
        raise ValueError("one image per prompt: some prompt is given twice")
    bundle = Path(bundle)
    rows_file = bundle / "images.jsonl"
    rows = [_row(image, model_id) for image in images]
    _refuse_a_folder_outside(bundle, model_id)
    held = [row for row in read_rows(rows_file) if row.get("model_id") == model_id]
    problems = []
    for image, row in zip(images, rows, strict=True):
        problems += _conflicts(image, row, held, bundle)
    if problems:
        raise BundleError(bundle, problems)
    for image, row in zip(images, rows, strict=True):
        target = bundle / row["path"]
        if not _holds_copy(target, image.path):
            _copy(image, target, bundle)
    return append_rows(rows_file, rows, unique_key="image_id")


# --------------------------------------------------------------------------------------------------
# The files
# --------------------------------------------------------------------------------------------------


def _listing(folder: Path) -> tuple[Path, list[str]]:
    """The resolved folder and the names in it, or ImageFolderError saying why not."""
    if not folder.is_dir():
        reason = "is not a folder" if folder.exists() else "no such folder"
        raise ImageFolderError(folder, [Problem(str(folder), None, reason)])
    try:
        root = folder.resolve(strict=True)
        return root, sorted(os.listdir(root))
    except OSError as error:
        reason = f"cannot be listed ({error.strerror})"
        raise ImageFolderError(folder, [Problem(str(folder), None, reason)]) from None


def _entry_problem(entry: Path, root: Path) -> str | None:
    """Why the folder's entry cannot be read as a file of its own (a link, a folder, ...)."""
    try:
        mode = entry.lstat().st_mode
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    if stat.S_ISLNK(mode):
        target = os.path.realpath(entry)
        if not target.startswith(str(root).rstrip(os.sep) + os.sep):
            return f"resolves outside the folder, to {_shown(target)}"
        inside = _shown(os.path.relpath(target, root))
        return f"is a symbolic link (to {inside}); put the file itself in the folder"
    if stat.S_ISDIR(mode):
        return "is a folder (the images lie in the folder itself, not in sub-folders)"
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    return None


def _image_size(
    entry: Path, named_format: str, extension: str
) -> tuple[tuple[int, int] | None, str | None]:
    """(width, height) of the image file, or (None, why it cannot be used)."""
    try:
        with _open_no_link(entry) as handle:
            info, reason = _checked(handle)
    except OSError as error:
        return None, _open_problem(error)
    if info is None:
        return None, reason
    if info.format != named_format:
        rename = _EXTENSION_OF[info.format]
        return None, f"holds a {info.format} image under a {extension} name; name it {rename}"
    return (info.width, info.height), None


def _checked(handle) -> tuple[ImageInfo | None, str | None]:
    """What the open file holds, or (None, why it is no image)."""
    if os.fstat(handle.fileno()).st_size == 0:
        return None, "is empty (0 bytes)"
    try:
        return read_image_info(handle), None
    except UnreadableImage as error:
        return None, f"unreadable image: {error}"


def _open_no_link(path: Path):
    """The file open for reading, never through a link (one put there after the folder was
    listed fails with ELOOP): what is checked or copied is the descriptor opened here."""
    return os.fdopen(os.open(path, os.O_RDONLY | _NO_LINK), "rb")


def _open_problem(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "is a symbolic link now (put there after the folder was listed); refused"
    return f"cannot be read ({error.strerror})"


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, never through a link (one put there after the folder was listed)."""
    with _open_no_link(path) as handle:
        return handle.read()


def _size_as_said(
    name: str, size: tuple[int, int] | None, line: _Meta | None, problems: list[Problem]
) -> bool:
    """Whether the file read whole with the size its meta.jsonl line says, if it says one."""
    if size is None:
        return False
    if line is None or "width" not in line.values:
        return True
    said = (line.values["width"], line.values["height"])
    if said == size:
        return True
    reason = f"is {size[0]}x{size[1]}, {META_FILE} line {line.line} says {said[0]}x{said[1]}"
    problems.append(Problem(_shown(name), None, reason))
    return False


# --------------------------------------------------------------------------------------------------
# meta.jsonl
# --------------------------------------------------------------------------------------------------


def _read_meta(path: Path, wanted: set[str], problems: list[Problem]) -> dict[str, _Meta]:
    """The lines of meta.jsonl by prompt; every line's problems added to `problems`. A line with
    a problem is kept when it names a prompt (so that its image is not also reported as having
    no line), but only its valid values are."""
    try:
        text = _read_bytes(path).decode("utf-8-sig")
    except OSError as error:
        problems.append(Problem(META_FILE, None, f"cannot be read ({error.strerror})"))
        return {}
    except UnicodeDecodeError as error:
        problems.append(Problem(META_FILE, None, f"not UTF-8 text (byte {error.start:,})"))
        return {}
    found: dict[str, _Meta] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        reasons: list[str] = []
        row = _parsed(line, reasons)
        if row is not None:
            prompt = _line_prompt(row, reasons)
            values = _values(row, reasons)
            if prompt is None:
                pass
            elif prompt not in wanted:
                reasons.append(f"no prompt {_shown(prompt)} in this evaluation")
            elif prompt in found:
                first = found[prompt].line
                reasons.append(f"prompt {_shown(prompt)} again (first on line {first})")
            else:
                found[prompt] = _Meta(number, values, frozenset(row))
        problems += [Problem(META_FILE, number, reason) for reason in reasons]
    return found


def _parsed(line: str, reasons: list[str]) -> dict | None:
    def no_repeats(pairs):
        keys = [key for key, _ in pairs]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        if repeated:
            raise ValueError(f"key {', '.join(map(_shown, repeated))} given twice")
        return dict(pairs)

    def no_constant(name):
        raise ValueError(f"{name} is not a JSON number")

    try:
        row = json.loads(line, object_pairs_hook=no_repeats, parse_constant=no_constant)
    except json.JSONDecodeError as error:
        reasons.append(f"not JSON ({error.msg}, column {error.colno})")
        return None
    except ValueError as error:
        reasons.append(f"not JSON ({error})")
        return None
    if not isinstance(row, dict):
        reasons.append(f"not a JSON object: {_cut(json.dumps(row))}")
        return None
    return row


def _line_prompt(row: dict, reasons: list[str]) -> str | None:
    prompt = row.get("prompt_id")
    if "prompt_id" not in row:
        reasons.append("no prompt_id")
    elif not isinstance(prompt, str):
        reasons.append(f"prompt_id must be a string, got {_cut(json.dumps(prompt))}")
    else:
        return prompt
    return None


def _values(row: dict, reasons: list[str]) -> dict:
    """The line's valid values (less prompt_id), its wrong ones reported."""
    unknown = [key for key in row if key not in META_KEYS]
    if unknown:
        listed = ", ".join(_shown(key) for key in unknown)
        reasons.append(
            f"unknown key{'s' if len(unknown) > 1 else ''} {listed} "
            f"({META_FILE} knows {', '.join(META_KEYS)})"
        )
    values = {}
    for key in META_KEYS[1:]:
        if key not in row:
            continue
        reason = _value_problem(key, row[key])
        if reason is None:
            values[key] = row[key]
        else:
            reasons.append(reason)
    for pair in (("width", "height"), ("latency_s", "gpus")):
        _both_or_neither(pair, row, values, reasons)
    return values


def _both_or_neither(pair: tuple[str, str], row: dict, values: dict, reasons: list[str]) -> None:
    """A size is both sides, a cost both latency and GPUs: one without the other is refused,
    and where one of them was wrong, neither is kept."""
    first, second = pair
    if (first in row) != (second in row):
        given, absent = pair if first in row else (second, first)
        reasons.append(f"gives {given} but no {absent} (give both or neither)")
    if (first in values) != (second in values):
        values.pop(first, None)
        values.pop(second, None)


def _value_problem(key: str, value) -> str | None:
    shown = _cut(json.dumps(value))
    is_integer = isinstance(value, int) and not isinstance(value, bool)
    if key == "seed":
        if not is_integer:
            return f"seed must be an integer, got {shown}"
        if not -_INT64 <= value < _INT64:
            return f"seed must fit in 64 bits, got {shown}"
    elif key == "latency_s":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"latency_s must be a number, got {shown}"
        if not math.isfinite(value) or value < 0:
            return f"latency_s must be a finite number >= 0, got {shown}"
    else:  # width, height, gpus
        if not is_integer:
            return f"{key} must be an integer, got {shown}"
        if not 0 < value < _INT64:
            return f"{key} must be > 0, got {shown}"
    return None


# --------------------------------------------------------------------------------------------------
# The bundle
# --------------------------------------------------------------------------------------------------


def _row(image: FolderImage, model_id: str) -> dict:
    if not is_safe_id(image.prompt_id):
        raise ValueError(f"prompt_id {image.prompt_id!r} is not a safe identifier ({SAFE_ID_RULE})")
    # the generation asset's image_id (`runs.image_id`); an image without a seed has no `__s`
    image_id = f"{model_id}__{image.prompt_id}"
    if image.seed is not None:
        image_id += f"__s{image.seed}"
    return {
        "image_id": image_id,
        "prompt_id": image.prompt_id,
        "model_id": model_id,
        "width": image.width,
        "height": image.height,
        "latency_s": image.latency_s,
        "gpus": image.gpus,
        "path": f"images/{model_id}/{image.prompt_id}{image.extension}",
        "seed": image.seed,
        "backend": BACKEND,
        "source_file": image.path.name,
    }


def _refuse_a_folder_outside(bundle: Path, model_id: str) -> None:
    """The images folder of the model must lie inside the bundle (a link there would send the
    copies elsewhere, and the import would refuse their paths)."""
    inside = os.path.realpath(bundle)
    folder = os.path.realpath(bundle / "images" / model_id)
    if not folder.startswith(inside.rstrip(os.sep) + os.sep):
        reason = f"resolves outside the bundle folder, to {_shown(folder)}"
        raise BundleError(bundle, [Problem(f"images/{model_id}", None, reason)])


def _conflicts(image: FolderImage, row: dict, held: list[dict], bundle: Path) -> list[Problem]:
    """Why the bundle's rows of the prompt for the model are not this image's: another image_id,
    other values, or another file at the path of its row."""
    problems = []
    for stored in (r for r in held if r.get("prompt_id") == row["prompt_id"]):
        if stored.get("image_id") != row["image_id"]:
            reason = (
                f"holds image {stored.get('image_id')} of model {row['model_id']} for prompt "
                f"{row['prompt_id']}, not {row['image_id']} (the folder's "
                f"{_shown(image.path.name)}); evaluate the folder into a new bundle"
            )
            problems.append(Problem("images.jsonl", None, reason))
            continue
        differ = [key for key in row if key in stored and stored[key] != row[key]]
        if differ:
            said = ", ".join(f"{key} {stored[key]!r} (the folder: {row[key]!r})" for key in differ)
            problems.append(Problem("images.jsonl", None, f"holds {row['image_id']} with {said}"))
        target = bundle / row["path"]
        if target.exists() and not _holds_copy(target, image.path):
            reason = f"differs from the folder's {_shown(image.path.name)}, whose row it holds"
            problems.append(Problem(row["path"], None, reason))
    return problems


def _holds_copy(target: Path, source: Path) -> bool:
    """Whether `target` is a file of its own (no link) holding the bytes of `source`."""
    try:
        if not stat.S_ISREG(target.lstat().st_mode):
            return False
        if target.stat().st_size != source.stat().st_size:
            return False
        return _read_bytes(target) == _read_bytes(source)
    except OSError:
        return False


def _copy(image: FolderImage, target: Path, bundle: Path) -> None:
    """Copy atomically (a temporary file, then a rename), never through a link, so a crash
    leaves no half image and the bundle holds a file of its own. The source is checked again
    from the descriptor it is copied from, so what is copied is what was checked (a file changed
    or turned into a link since the folder was checked is refused)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    try:
        with _open_no_link(image.path) as read:
            reason = _changed(image, read)
            if reason is None:
                read.seek(0)
                _write_new(partial, read, bundle)
    except OSError as error:
        reason = _open_problem(error)
    if reason is not None:
        raise BundleError(bundle, [Problem(_shown(image.path.name), None, reason)])
    os.replace(partial, target)


def _changed(image: FolderImage, read) -> str | None:
    """Why the open file is no longer the image that was checked, or None."""
    info, reason = _checked(read)
    if info is not None and (info.width, info.height) != (image.width, image.height):
        reason = f"is {info.width}x{info.height} now, was {image.width}x{image.height}"
    return None if reason is None else f"changed since the folder was checked: {reason}"


def _write_new(partial: Path, read, bundle: Path) -> None:
    """`read`'s bytes into `partial`, created anew (O_EXCL, never through a link): a file or
    link left there (a crash, or put there) is removed first; one put there again in between
    fails the copy instead of being written through."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(partial)
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NO_LINK, 0o644)
    except OSError as error:
        shown = _shown(os.path.relpath(partial, bundle))
        reason = f"cannot be created anew ({error.strerror}); something was put there meanwhile"
        raise BundleError(bundle, [Problem(shown, None, reason)]) from None
    with os.fdopen(descriptor, "wb") as write:
        shutil.copyfileobj(read, write)
        write.flush()
        os.fsync(write.fileno())


# --------------------------------------------------------------------------------------------------
# Messages
# --------------------------------------------------------------------------------------------------


def _problem_order(problem: Problem) -> tuple[str, int, str]:
    return problem.file, problem.line or 0, problem.reason


def _shown(name: str) -> str:
    """A name as it is, or as JSON where it holds a line break, a control character or bytes
    that are not UTF-8 (so the listing stays one line per problem)."""
    return name if name.isprintable() else json.dumps(name)


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"
