"""Images drawn elsewhere (`qct2i evaluate MODEL_ID --images DIR`, issue 25): a folder holding
`<prompt_id>.png` (or `.jpg`, `.jpeg`, `.webp`), one image per prompt, and `meta.jsonl`, read and
checked as a whole (`read_image_folder`), then put into a bundle folder as the generation asset
puts the images it draws (`add_folder_images`), for the judging assets to read.

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
- an empty file, and one that is no whole PNG, JPEG or WebP image (`image_files`: truncated,
  a PNG failing its CRC, an animated WebP, another format), or holds another format than its
  extension names (a JPEG named `.png`);
- an image whose size (read from its bytes by `image_files`: this layer may not import PIL)
  differs from what meta.jsonl says;
- in meta.jsonl: a line that is not JSON (a key twice, NaN), not an object, names no prompt of
  the evaluation or one named before, holds a key the file does not know, or a value of the
  wrong type or range (`seed` an integer; `width`, `height`, `gpus` positive integers; `latency_s`
  a non-negative number; `width` and `height` both or neither);
- an image without `latency_s` and `gpus`: see below.

Names starting with `.` are ignored (`.DS_Store`, macOS's `._a.png`, `.ipynb_checkpoints`):
operating systems and tools leave them beside the files a user put there.

`latency_s` and `gpus` are required, although the issue calls meta.jsonl optional: the bundle's
`images` table holds both in non-nullable columns (`ingestion.bundle.format`), and the cost the
marts measure is latency x GPUs per megapixel over a generator's images (`int_generators.sql`),
so a guessed 0 or 1 would publish a made-up "measured" cost. A folder without meta.jsonl is
therefore refused with one line saying what it must give; `seed` and the size stay optional.

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
from ingestion.sources.image_files import JPEG, PNG, WEBP, UnreadableImage, read_image_info

META_FILE = "meta.jsonl"
BACKEND = "image_folder"  # images.backend of an image drawn elsewhere
IMAGE_EXTENSIONS = {".png": PNG, ".jpg": JPEG, ".jpeg": JPEG, ".webp": WEBP}
META_KEYS = ("prompt_id", "seed", "width", "height", "latency_s", "gpus")
_EXTENSION_OF = {PNG: ".png", JPEG: ".jpg", WEBP: ".webp"}
_INT64 = 2**63


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
    and what meta.jsonl says of its draw."""

    prompt_id: str
    path: Path  # the file in the folder
    width: int
    height: int
    latency_s: float
    gpus: int
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
    meta_present = meta_usable = False
    for name in names:
        if name.startswith("."):
            continue
        entry, shown = root / name, _shown(name)
        extension = os.path.splitext(name)[1].lower()
        reason = _entry_problem(entry, root)
        if name == META_FILE:
            meta_present, meta_usable = True, reason is None
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
    meta = _read_meta(root / META_FILE, wanted, problems) if meta_usable else None
    if not meta_present and wanted:
        problems.append(Problem(META_FILE, None, _NO_META))
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
        line = meta.get(prompt) if meta is not None else None
        sized = [_size_as_said(name, sizes.get(name), line, problems) for name in named]
        costed = _cost_given(named, line, meta is not None, problems)
        if len(named) == 1 and sized[0] and costed:
            width, height = sizes[named[0]]
            latency, gpus, seed = (line.values.get(key) for key in ("latency_s", "gpus", "seed"))
            images.append(
                FolderImage(prompt, root / named[0], width, height, float(latency), gpus, seed)
            )
    if problems:
        raise ImageFolderError(folder, sorted(set(problems), key=_problem_order))
    return images


_NO_META = (
    "missing: the images table needs every image's latency_s and gpus (one line per image, "
    'e.g. {"prompt_id": "p1", "latency_s": 2.5, "gpus": 1})'
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
            _copy(image.path, target)
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
        data = _read_bytes(entry)
    except OSError as error:
        return None, f"cannot be read ({error.strerror})"
    if not data:
        return None, "is empty (0 bytes)"
    try:
        info = read_image_info(data)
    except UnreadableImage as error:
        return None, f"unreadable image: {error}"
    if info.format != named_format:
        rename = _EXTENSION_OF[info.format]
        return None, f"holds a {info.format} image under a {extension} name; name it {rename}"
    return (info.width, info.height), None


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, never through a link (one put there after the folder was listed)."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(descriptor, "rb") as handle:
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


def _cost_given(
    named: list[str], line: _Meta | None, meta_read: bool, problems: list[Problem]
) -> bool:
    """Whether the prompt's meta.jsonl line gives latency_s and gpus (valid or not: a wrong
    value has its own problem). A meta.jsonl that is missing or refused has its own line."""
    if line is None:
        if meta_read:
            reason = f"no {META_FILE} line for this image (the images table needs its latency_s"
            reason += " and gpus)"
            problems += [Problem(_shown(name), None, reason) for name in named]
        return False
    missing = [key for key in ("latency_s", "gpus") if key not in line.given]
    if missing:
        reason = f"gives no {' and no '.join(missing)} (the images table needs both)"
        problems.append(Problem(META_FILE, line.line, reason))
    return not missing


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
    if ("width" in row) != ("height" in row):
        given, absent = ("width", "height") if "width" in row else ("height", "width")
        reasons.append(f"gives {given} but no {absent} (give both or neither)")
    if ("width" in values) != ("height" in values):  # one of them was wrong: compare neither
        values.pop("width", None)
        values.pop("height", None)
    return values


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


def _copy(source: Path, target: Path) -> None:
    """Copy atomically (a temporary file, then a rename), never through a link, so a crash
    leaves no half image and the bundle holds a file of its own."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    descriptor = os.open(source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(descriptor, "rb") as read, partial.open("wb") as write:
        shutil.copyfileobj(read, write)
        write.flush()
        os.fsync(write.fileno())
    os.replace(partial, target)


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
