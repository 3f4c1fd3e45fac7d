"""Text Content statistics (METHOD 3, Eq. 3) against hand counts and independent references.

The references (tests/helpers.py) are written from the definition and share no code with
method.text_match:
a plain dynamic-programming Levenshtein over UTF-16 code units, the cap at the target's length,
and a brute force over every assignment. The brute-force test takes its distances from them, so a
wrong distance in the code under test (say, substitution costing 2) fails it on its own.
"""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from method.text_match import (
    SMALL_ASSIGNMENT,
    best_total_saving,
    capped_distance,
    edit_distance,
    match_text,
    text_match_table,
    utf16_length,
    utf16_units,
)
from tests.helpers import (
    reference_capped,
    reference_levenshtein,
    reference_text_match,
    reference_units,
)

# A BMP letter, a BMP CJK character, and two astral characters (two UTF-16 units each).
ALPHABET = "ab福𠮷😀"


def test_non_bmp_character_counts_two_units():
    assert utf16_units("𠮷") == (0xD842, 0xDFB7)
    # Reading "吉" for "𠮷": both surrogates differ from the one BMP unit -> 1 sub + 1 del = 2.
    assert match_text(["𠮷野家"], ["吉野家"]).distance_utf16 == 2
    assert match_text(["𠮷野家"], ["吉野家"]).target_length_utf16 == 4


def test_distance_is_capped_at_the_target_length():
    # Plain Levenshtein("OPEN", "a much longer unrelated sentence") is far above 4.
    assert edit_distance(utf16_units("OPEN"), utf16_units("a much longer sentence")) > 4
    assert match_text(["OPEN"], ["a much longer sentence"]).distance_utf16 == 4


def test_more_targets_than_blocks_costs_the_unmatched_target_in_full():
    # "SALE" matches "SALE" exactly; "Cafe Luna" (9 units) has no block left.
    match = match_text(["Cafe Luna", "SALE"], ["SALE"])
    assert (match.distance_utf16, match.target_length_utf16, match.n_matched_targets) == (9, 13, 1)


def test_empty_extraction_costs_every_target_in_full():
    match = match_text(["OPEN", "福"], [])
    assert (match.distance_utf16, match.target_length_utf16) == (5, 5)


def test_assignment_is_optimal_not_greedy():
    # Greedy in target order lets "ABC" take "AB" (cost 1, the first of a tie), leaving "AB" with
    # "ABX" (1): total 2. The optimum pairs "ABC" with "ABX" (1) and "AB" with "AB" (0): total 1.
    match = match_text(["ABC", "AB"], ["AB", "ABX"])
    assert match.distance_utf16 == 1


def test_extra_blocks_cost_nothing():
    assert match_text(["OPEN"], ["junk", "OPEN", "more junk"]).distance_utf16 == 0


@settings(max_examples=150, deadline=None)
@given(
    targets=st.lists(st.text(alphabet=ALPHABET, min_size=1, max_size=4), min_size=1, max_size=3),
    blocks=st.lists(st.text(alphabet=ALPHABET + "c", max_size=5), max_size=3),
)
def test_hungarian_matches_brute_force(targets, blocks):
    match = match_text(targets, blocks)
    assert (match.distance_utf16, match.target_length_utf16) == reference_text_match(
        targets, blocks
    )
    assert match.n_matched_targets == min(len(targets), len(blocks))


@pytest.mark.parametrize("shape", [(2, 2), (3, 5), (5, 3), (6, 6), (4, 1)])
def test_every_assignment_tried_gives_scipys_optimum(shape):
    """Small matrices are solved by trying every assignment; scipy's Hungarian method is the
    reference (the largest total of min(rows, columns) distinct pairs)."""
    from scipy.optimize import linear_sum_assignment

    rng = np.random.default_rng(sum(shape))
    for _ in range(40):
        savings = rng.integers(0, 6, size=shape)
        rows, cols = linear_sum_assignment(savings, maximize=True)
        assert best_total_saving(savings) == savings[rows, cols].sum()


def test_a_large_assignment_goes_to_scipy_and_finds_the_planted_optimum():
    """Past SMALL_ASSIGNMENT: 8 targets x 9 blocks whose only full-saving pairs are target i
    with block (i + 1) mod 9, every other pair saving at most 1 of each target's 5."""
    n, m = SMALL_ASSIGNMENT + 2, SMALL_ASSIGNMENT + 3
    savings = np.random.default_rng(3).integers(0, 2, size=(n, m))
    savings[np.arange(n), (np.arange(n) + 1) % m] = 5
    assert best_total_saving(savings) == 5 * n
    assert best_total_saving(savings.T) == 5 * n


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [("kitten", "sitting", 3), ("", "abc", 3), ("flaw", "lawn", 2), ("same", "same", 0)],
)
def test_edit_distance_hand_values(a, b, expected):
    assert edit_distance(utf16_units(a), utf16_units(b)) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [("kitten", "sitting", 3), ("flaw", "lawn", 2), ("", "abc", 3), ("𠮷", "吉", 2)],
)
def test_reference_levenshtein_hand_values(a, b, expected):
    """The reference itself is checked by hand, so agreement with it means something."""
    assert reference_levenshtein(reference_units(a), reference_units(b)) == expected


def test_reference_units_match_hand_surrogates():
    assert reference_units("a𠮷😀") == [0x61, 0xD842, 0xDFB7, 0xD83D, 0xDE00]


@settings(max_examples=300, deadline=None)
@given(a=st.text(alphabet=ALPHABET, max_size=8), b=st.text(alphabet=ALPHABET, max_size=8))
def test_edit_distance_agrees_with_the_reference(a, b):
    assert list(utf16_units(a)) == reference_units(a)
    assert edit_distance(utf16_units(a), utf16_units(b)) == reference_levenshtein(
        reference_units(a), reference_units(b)
    )
    assert capped_distance(a, b) == reference_capped(a, b)


@settings(max_examples=200, deadline=None)
@given(a=st.text(max_size=6), b=st.text(max_size=6))
def test_edit_distance_agrees_with_the_reference_on_any_text(a, b):
    """Any code points, astral ones included (hypothesis draws them from the whole range)."""
    assert capped_distance(a, b) == reference_capped(a, b)


# int_text_targets rows (model, prompt, status, targets, blocks) and the counts, L and D worked
# out by hand: n_targets, n_blocks, L, D
TEXT_IMAGES = [
    # OPEN -> OPEM: 1 substitution; SALE exact; the extra block costs nothing. L = 4 + 4
    (("m2", "p1", "ok", ["OPEN", "SALE"], ["OPEM", "SALE", "extra"]), (2, 3, 8, 1)),
    # "Cafe Luna" (9 units) takes the one block "Cafe Lune" (1 substitution); "𠮷" (2 units, a
    # surrogate pair) has none left and costs its full length: D = 1 + 2, L = 9 + 2
    (("m1", "p1", "ok", ["Cafe Luna", "𠮷"], ["Cafe Lune"]), (2, 1, 11, 3)),
    # no transcription: L is still the targets' length, D is null
    (("m1", "p2", "unavailable", ["OPEN"], None), (1, 0, 4, None)),
    # an `ok` transcription with no blocks (null): every target costs in full, D = L
    (("m2", "p2", "ok", ["AB"], None), (1, 0, 2, 2)),
]


def test_text_match_table_by_hand():
    """int_text_match's table: counts, L and D per image in input order; D null unless `ok`."""
    keys = ("model_id", "prompt_id", "transcription_status", "text_targets", "text_blocks")
    images = pa.Table.from_pylist([dict(zip(keys, row, strict=True)) for row, _ in TEXT_IMAGES])
    got = text_match_table(images)
    assert [(f.name, f.type) for f in got.schema] == [
        ("model_id", pa.string()),
        ("prompt_id", pa.string()),
        ("transcription_status", pa.string()),
        ("n_targets", pa.int64()),
        ("n_blocks", pa.int64()),
        ("target_length_utf16", pa.int64()),
        ("edit_distance_utf16", pa.int64()),
    ]
    assert [tuple(r.values()) for r in got.to_pylist()] == [
        (*row[:3], *expected) for row, expected in TEXT_IMAGES
    ]


def test_no_ok_transcription_keeps_the_integer_columns_and_cut_distances_stop_at_the_cap():
    """Mutation testing (issue 36): with no `ok` transcription every D is null, and the table
    must still carry int64 (Arrow infers the null type from Nones alone); a target's length is
    a whole number of UTF-16 units, not a float; a distance past `cap` comes back as cap + 1
    ("abc" -> "xyz" is 3 substitutions)."""
    keys = ("model_id", "prompt_id", "transcription_status", "text_targets", "text_blocks")
    images = pa.Table.from_pylist(
        [dict(zip(keys, ("m1", "p1", "error", ["AB"], None), strict=True))]
    )
    table = text_match_table(images)
    assert table.schema.field("edit_distance_utf16").type == pa.int64()
    assert table.column("edit_distance_utf16").to_pylist() == [None]
    assert type(utf16_length("A😀")) is int and utf16_length("A😀") == 3
    assert edit_distance(utf16_units("abc"), utf16_units("xyz"), cap=1) == 2
    assert edit_distance(utf16_units("abc"), utf16_units("xyz")) == 3
