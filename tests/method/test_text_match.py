"""Text Content statistics (METHOD 3) against hand counts and a brute-force assignment."""

from itertools import permutations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from method.text_match import capped_distance, edit_distance, match_text, utf16_units


def brute_force(targets: list[str], blocks: list[str]) -> tuple[int, int]:
    """Every injective assignment of targets to blocks (or to nothing), the cheapest kept."""
    lengths = [len(t.encode("utf-16-le")) // 2 for t in targets]
    best = sum(lengths)
    slots = list(range(len(blocks))) + [None] * len(targets)
    for chosen in permutations(slots, len(targets)):
        cost = sum(
            lengths[i] if j is None else capped_distance(targets[i], blocks[j])
            for i, j in enumerate(chosen)
        )
        best = min(best, cost)
    return best, sum(lengths)


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
    targets=st.lists(st.text(alphabet="ab福𠮷", min_size=1, max_size=4), min_size=1, max_size=3),
    blocks=st.lists(st.text(alphabet="ab福𠮷c", max_size=5), max_size=3),
)
def test_hungarian_matches_brute_force(targets, blocks):
    match = match_text(targets, blocks)
    assert (match.distance_utf16, match.target_length_utf16) == brute_force(targets, blocks)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [("kitten", "sitting", 3), ("", "abc", 3), ("flaw", "lawn", 2), ("same", "same", 0)],
)
def test_edit_distance_hand_values(a, b, expected):
    assert edit_distance(utf16_units(a), utf16_units(b)) == expected
