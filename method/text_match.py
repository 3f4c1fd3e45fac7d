"""Text Content scoring (METHOD 3, the statistics inside Eq. 3).

Per image the OCR'd blocks are matched to the text targets by a minimum-total-cost assignment.
Distances are counted in UTF-16 code units, so a character outside the BMP counts 2. The distance
is target-conditioned: capped at the target's own length; a target left without a block (more
targets than blocks, or an empty extraction) costs its full length. Extra blocks cost nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations

import numpy as np
import pyarrow as pa
from rapidfuzz.distance import Levenshtein


def utf16_units(text: str) -> tuple[int, ...]:
    """The string as UTF-16 code units (a surrogate pair is two units)."""
    encoded = text.encode("utf-16-le")
    return tuple(int.from_bytes(encoded[i : i + 2], "little") for i in range(0, len(encoded), 2))


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def edit_distance(a: Sequence[int], b: Sequence[int], cap: int | None = None) -> int:
    """Levenshtein distance (unit insert, delete, substitute) between two code-unit sequences.

    rapidfuzz's C++ Levenshtein takes any sequences of hashables, so UTF-16 code units go in as
    ints. With `cap`, any distance above it comes back as cap + 1 (rapidfuzz stops early).
    """
    return Levenshtein.distance(a, b, weights=(1, 1, 1), score_cutoff=cap)


def capped_distance(target: str, block: str) -> int:
    """Target-conditioned distance: never more than the target's own UTF-16 length."""
    cap = utf16_length(target)
    return min(edit_distance(utf16_units(target), utf16_units(block), cap=cap), cap)


@dataclass(frozen=True)
class TextMatch:
    distance_utf16: int
    target_length_utf16: int
    n_matched_targets: int


def match_text(targets: Sequence[str], blocks: Sequence[str]) -> TextMatch:
    """Optimal assignment of blocks to targets; returns the summed distance D and length L.

    Every target starts at its full length (unmatched); matching target i to block j saves
    length_i - distance_ij >= 0, so the assignment of largest total saving both picks the pairs
    and, since savings are never negative, matches as many targets as there are blocks.
    """
    lengths = np.array([utf16_length(t) for t in targets], dtype=np.int64)
    total_length = int(lengths.sum())
    if len(targets) == 0 or len(blocks) == 0:
        return TextMatch(total_length, total_length, 0)
    distances = np.array([[capped_distance(t, b) for b in blocks] for t in targets], dtype=np.int64)
    savings = lengths[:, None] - distances
    distance = total_length - best_total_saving(savings)
    return TextMatch(distance, total_length, min(savings.shape))


# Up to this many targets and blocks, every assignment is tried (at most 6! = 720).
SMALL_ASSIGNMENT = 6


def best_total_saving(savings: np.ndarray) -> int:
    """The largest total saving of an assignment of min(rows, columns) distinct pairs.

    D and the matched count are integers, so every optimal assignment gives the same ones. A
    few targets and blocks (nearly every image) are solved by trying each assignment; scipy's
    Hungarian method takes the rest, imported only then: scipy.optimize takes about 0.4 s to
    import, which every dbt build (a new process running int_text_match) used to pay.
    """
    if savings.shape[0] > savings.shape[1]:
        savings = savings.T  # rows: the fewer side
    n_rows, n_cols = savings.shape
    if n_rows == 1:
        return int(savings.max())
    if n_cols <= SMALL_ASSIGNMENT:
        columns = np.array(list(permutations(range(n_cols), n_rows)))
        return int(savings[np.arange(n_rows), columns].sum(axis=1).max())
    from scipy.optimize import linear_sum_assignment

    rows, cols = linear_sum_assignment(savings, maximize=True)
    return int(savings[rows, cols].sum())


TEXT_MATCH_SCHEMA = pa.schema(
    [
        ("model_id", pa.string()),
        ("prompt_id", pa.string()),
        ("transcription_status", pa.string()),
        ("n_targets", pa.int64()),
        ("n_blocks", pa.int64()),
        ("target_length_utf16", pa.int64()),
        ("edit_distance_utf16", pa.int64()),
    ]
)


def text_match_table(images: pa.Table) -> pa.Table:
    """int_text_match: per image (a row of `int_text_targets`: model_id, prompt_id,
    transcription_status, text_targets, text_blocks) the target length L and, where the
    transcription is `ok`, the optimal-assignment edit distance D (`match_text`); D is null for
    any other status (no transcription to match). Null blocks count as none. Rows keep the
    input's order."""
    rows = []
    for image in images.to_pylist():
        is_ok = image["transcription_status"] == "ok"
        targets = image["text_targets"]
        match = match_text(targets, image["text_blocks"] or []) if is_ok else None
        rows.append(
            {
                "model_id": image["model_id"],
                "prompt_id": image["prompt_id"],
                "transcription_status": image["transcription_status"],
                "n_targets": len(targets),
                "n_blocks": len(image["text_blocks"] or []),
                "target_length_utf16": sum(utf16_length(t) for t in targets),
                "edit_distance_utf16": match.distance_utf16 if match else None,
            }
        )
    return pa.Table.from_pylist(rows, schema=TEXT_MATCH_SCHEMA)
