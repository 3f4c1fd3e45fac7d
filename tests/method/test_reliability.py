"""method.hcq, method.bootstrap and method.aggregation_robustness against brute-force routes."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from method.aggregation_robustness import robustness, subsample_matrix, variance_ratio
from method.bootstrap import (
    bootstrap_totals,
    competition_ranks,
    concept_stats,
    concept_weights,
    missing_judgments,
    pairwise_intervals,
    point_totals,
    rank_intervals,
    top1_probability,
)
from method.hcq import hcq_total, hcq_weights

GROUPS = ("e", "e", "t", "a", "a", "a")  # a small taxonomy: sizes 2, 1, 3


def brute_hcq(scores, groups=GROUPS):
    views = []
    for g in dict.fromkeys(groups):
        vals = [s for s, gg in zip(scores, groups, strict=True) if gg == g and not np.isnan(s)]
        if vals:
            views.append(sum(vals) / len(vals))
    return sum(views) / len(views) if views else float("nan")


def test_hcq_by_hand():
    # e: (0.8 + 0.6) / 2 = 0.7; t: NaN -> group out; a: only 0.5 -> 0.5. Total (0.7 + 0.5) / 2.
    scores = np.array([0.8, 0.6, np.nan, np.nan, 0.5, np.nan])
    assert hcq_total(scores, GROUPS) == pytest.approx(0.6)
    assert np.isnan(hcq_total(np.full(6, np.nan), GROUPS))


def test_hcq_and_weights_match_brute_force_on_random_batches():
    rng = np.random.default_rng(1)
    scores = rng.random((50, 4, 6))
    scores[rng.random(scores.shape) < 0.3] = np.nan
    got = hcq_total(scores, GROUPS)
    want = np.array([[brute_hcq(s) for s in row] for row in scores])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15, equal_nan=True)
    weights = hcq_weights(~np.isnan(scores), GROUPS)
    via_weights = np.where(np.isnan(want), np.nan, np.nansum(weights * scores, axis=-1))
    np.testing.assert_allclose(via_weights, want, atol=1e-14, equal_nan=True)


def small_stats(seed=0, n_concepts=30):
    """Random long rows for 3 models x 2 languages over the small taxonomy; cap 't' is text."""
    rng = np.random.default_rng(seed)
    rows = {k: [] for k in ("concept_id", "model_id", "language", "capability")}
    for k in ("n_valid", "n_valid_yes", "n_questions", "n_answered", "n_yes"):
        rows[k] = []
    rows["text_distance_utf16"], rows["text_length_utf16"] = [], []
    rows["score_num"], rows["score_den"] = [], []
    caps = ("c1", "c2", "t", "c4", "c5", "c6")
    for c in range(n_concepts):
        for m in ("m1", "m2", "m3"):
            for lang in ("en", "zh"):
                for cap in caps:
                    if rng.random() < 0.4:
                        continue
                    n_q = int(rng.integers(1, 4))
                    # some judgments missing (METHOD 6 leaves them out of both totals)
                    n_a = int(rng.integers(0, n_q + 1))
                    n_v = int(rng.integers(0, n_a + 1))
                    length = int(rng.integers(0, 9)) if cap == "t" else 0
                    for key, val in (
                        ("concept_id", f"c{c:03d}"),
                        ("model_id", m),
                        ("language", lang),
                        ("capability", cap),
                        ("n_questions", n_q),
                        ("n_answered", n_a),
                        ("n_yes", int(rng.integers(0, n_a + 1))),
                        ("n_valid", n_v),
                        ("n_valid_yes", int(rng.integers(0, n_v + 1))),
                        ("text_length_utf16", length),
                        ("text_distance_utf16", int(rng.integers(0, length + 3))),
                    ):
                        rows[key].append(val)
                    # the one encoding the warehouse emits (int_prompt_sufficient_stats): L - D / L
                    # for the text capability, valid yes / valid otherwise
                    text = cap == "t"
                    d, l_ = rows["text_distance_utf16"][-1], rows["text_length_utf16"][-1]
                    rows["score_num"].append(l_ - d if text else rows["n_valid_yes"][-1])
                    rows["score_den"].append(l_ if text else rows["n_valid"][-1])
    return rows, caps


def brute_totals(rows, caps, concept_multiset, masked=True):
    """Scores and HCQ from plain Python sums over a list of concepts (repeats allowed)."""
    count = {c: concept_multiset.count(c) for c in set(concept_multiset)}
    out = {}
    for m in ("m1", "m2", "m3"):
        per_lang = {}
        for lang in ("en", "zh"):
            scores = []
            for cap in caps:
                num = den = 0
                for i in range(len(rows["concept_id"])):
                    if (rows["model_id"][i], rows["language"][i], rows["capability"][i]) != (
                        m,
                        lang,
                        cap,
                    ):
                        continue
                    w = count.get(rows["concept_id"][i], 0)
                    if cap == "t":
                        num += w * rows["text_distance_utf16"][i]
                        den += w * rows["text_length_utf16"][i]
                    elif masked:
                        num += w * rows["n_valid_yes"][i]
                        den += w * rows["n_valid"][i]
                    else:
                        num += w * rows["n_yes"][i]
                        den += w * rows["n_answered"][i]
                if den == 0:
                    scores.append(float("nan"))
                else:
                    scores.append(max(0.0, 1 - num / den) if cap == "t" else num / den)
            per_lang[lang] = brute_hcq(scores)
        out[m] = (per_lang["en"], per_lang["zh"], (per_lang["en"] + per_lang["zh"]) / 2)
    return out


@pytest.mark.parametrize("masked", [True, False])
def test_point_totals_match_brute_force(masked):
    rows, caps = small_stats()
    stats = concept_stats(rows, caps, GROUPS, ["t"], masked=masked)
    assert stats.scopes == ("en", "zh", "bilingual")
    want = brute_totals(rows, caps, sorted(set(rows["concept_id"])), masked=masked)
    got = point_totals(stats)
    for i, m in enumerate(stats.model_ids):
        np.testing.assert_allclose(got[i], want[m], atol=1e-15, equal_nan=True)


def test_missing_judgments_by_hand():
    """Guards the count METHOD 6 reports beside the totals: per model, the `n_missing` of the
    scope's languages summed (bilingual = en + zh), a model without a missing judgment 0."""
    stats = pa.table(
        {
            "model_id": ["m1", "m1", "m1", "m2"],
            "language": ["en", "zh", "en", "zh"],
            "n_missing": [2, 5, 1, 0],
        }
    )
    got = missing_judgments(stats, ("m1", "m2"), ("en", "zh", "bilingual"), ("en", "zh"))
    assert got.tolist() == [[3, 5, 8], [0, 0, 0]]


def test_bootstrap_draws_equal_explicitly_resampled_worlds():
    """Each replicate equals HCQ recomputed on the list of concepts that draw resampled."""
    rows, caps = small_stats(seed=3, n_concepts=12)
    stats = concept_stats(rows, caps, GROUPS, ["t"])
    totals = bootstrap_totals(stats, draws=7, seed=42)
    weights = np.concatenate(list(concept_weights(len(stats.concept_ids), 7, 42)))
    assert weights.shape == (7, 12)
    assert (weights.sum(axis=1) == 12).all()  # n concepts drawn with replacement
    for b in range(7):
        resampled = [
            c for c, w in zip(stats.concept_ids, weights[b], strict=True) for _ in range(int(w))
        ]
        want = brute_totals(rows, caps, resampled)
        for i, m in enumerate(stats.model_ids):
            np.testing.assert_allclose(totals[b, i], want[m], atol=1e-14, equal_nan=True)


def test_bootstrap_is_reproducible_and_seed_dependent():
    rows, caps = small_stats(seed=5)
    stats = concept_stats(rows, caps, GROUPS, ["t"])
    a = bootstrap_totals(stats, 300, seed=7)
    np.testing.assert_array_equal(a, bootstrap_totals(stats, 300, seed=7))
    assert not np.array_equal(a, bootstrap_totals(stats, 300, seed=8))


def test_ranks_top1_ties_and_intervals_by_hand():
    totals = np.array(
        [
            [0.9, 0.9, 0.1],  # tie for first: 1/2 each
            [0.8, 0.9, 0.1],  # m2 wins
            [0.9, np.nan, 0.5],  # m2 undefined: m1 wins, m3 ranks 2
            [0.7, 0.8, 0.9],  # m3 wins
        ]
    )
    np.testing.assert_array_equal(competition_ranks(totals[0]), [1, 1, 3])
    np.testing.assert_array_equal(competition_ranks(totals[2]), [1, np.nan, 2])
    top1 = top1_probability(totals)
    np.testing.assert_allclose(top1, [(0.5 + 1) / 4, (0.5 + 1) / 4, 1 / 4])
    assert top1.sum() == pytest.approx(1.0)
    # m1's ranks over the draws: 1, 2, 1, 3 -> inverse-CDF 2.5% = 1, 97.5% = 3.
    lo, hi = rank_intervals(totals)
    assert (lo[0], hi[0]) == (1, 3)
    assert (lo[1], hi[1]) == (1, 2)  # m2: ranks 1, 1, 2 (its NaN draw left out)


def test_pairwise_intervals_are_percentiles_of_differences():
    rng = np.random.default_rng(0)
    totals = rng.normal(size=(999, 3))
    lo, hi = pairwise_intervals(totals)
    d = totals[:, 0] - totals[:, 2]
    assert lo[0, 2] == pytest.approx(np.percentile(d, 2.5))
    assert hi[0, 2] == pytest.approx(np.percentile(d, 97.5))
    assert lo[2, 0] == pytest.approx(-hi[0, 2])  # mirrored pair


# -- Eq. 9 -------------------------------------------------------------------------------------

counts = st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=60)


def test_eq9_ratio_by_hand():
    # mean(n) * mean(1/n): (1 + 3) / 2 * (1 + 1/3) / 2 = 2 * 2/3
    assert variance_ratio([1, 3]) == pytest.approx(4 / 3, abs=1e-12)
    assert variance_ratio([0, 2, 2]) == 1.0  # a prompt without the capability does not count
    assert np.isnan(variance_ratio([0]))


@given(counts)
@settings(max_examples=300, deadline=None)
def test_eq9_ratio_is_at_least_one(n):
    assert variance_ratio(n) >= 1 - 1e-12


@given(st.integers(min_value=1, max_value=40), st.integers(min_value=1, max_value=60))
@settings(max_examples=200, deadline=None)
def test_eq9_ratio_is_one_for_equal_counts(k, n_prompts):
    assert variance_ratio([k] * n_prompts) == pytest.approx(1.0, abs=1e-12)


@given(st.lists(st.integers(min_value=0, max_value=6), min_size=6, max_size=6), counts)
@settings(max_examples=100, deadline=None)
def test_total_variance_ratio_is_at_least_one(first_prompt, other_counts):
    """Vp / Vq >= 1 for any counts, since each capability's term satisfies Eq. 9."""
    n = np.zeros((1 + len(other_counts), 1, 6))
    n[0, 0] = first_prompt
    n[1:, 0, 0] = other_counts
    n[1:, 0, 4] = other_counts[::-1]
    r = robustness(n, np.zeros(len(n), bool), np.arange(len(n)), np.ones((1, len(n))), GROUPS)
    assert r["total_ratio"][0, 0] >= 1 - 1e-12


def reference_alpha(available, groups=GROUPS):
    """Eq. 4's weights from the definition (METHOD 4-5): alpha_t = 1 / (G * T_g(t)).

    G counts the groups with at least one available capability, T_g(t) the available capabilities
    in t's group; an unavailable capability weighs 0.
    """
    available_groups = {g for a, g in zip(available, groups, strict=True) if a}
    alpha = []
    for a, g in zip(available, groups, strict=True):
        in_group = sum(1 for aa, gg in zip(available, groups, strict=True) if gg == g and aa)
        alpha.append(1 / (len(available_groups) * in_group) if a else 0.0)
    return alpha


def reference_ratio(counts):
    """Eq. 9 from the definition: mean(n) * mean(1/n) over the prompts with n > 0."""
    contributing = [x for x in counts if x > 0]
    if not contributing:
        return float("nan")
    mean_n = sum(contributing) / len(contributing)
    mean_inverse = sum(1 / x for x in contributing) / len(contributing)
    return mean_n * mean_inverse


def test_reference_alpha_by_hand():
    # Groups e (2), t (1), a (3); 't' unavailable -> 2 groups; 'a' has 2 of 3 available.
    got = reference_alpha([True, True, False, True, False, True])
    assert got == pytest.approx([1 / 4, 1 / 4, 0, 1 / 4, 0, 1 / 4])


def test_robustness_matches_brute_force_on_subsamples():
    rng = np.random.default_rng(2)
    n_prompts = 40
    n = rng.integers(0, 4, size=(n_prompts, 2, 6)).astype(float)
    n_questions = n.max(axis=1).sum(axis=1) + rng.integers(0, 2, n_prompts)
    is_short = n_questions <= 3
    concept = rng.permutation(n_prompts)  # one prompt per concept, shuffled
    subsamples = subsample_matrix(n_prompts, 25, 3, seed=9)
    assert (subsamples.sum(axis=1) == 25).all()
    r = robustness(n, is_short, concept, subsamples, GROUPS)
    for s in range(3):
        chosen = [p for p in range(n_prompts) if subsamples[s, concept[p]] == 1]
        for m in range(2):
            nn = n[chosen, m, :]
            for t in range(6):
                want_ratio = reference_ratio(list(nn[:, t]))
                assert r["ratio"][s, m, t] == pytest.approx(want_ratio, nan_ok=True)
            big_n, big_p = nn.sum(axis=0), (nn > 0).sum(axis=0)
            alpha = reference_alpha(list(big_n > 0))
            vq = sum(alpha[t] ** 2 / big_n[t] for t in range(6) if big_n[t])
            vp = sum(
                alpha[t] ** 2 * sum(1 / x for x in nn[:, t] if x) / big_p[t] ** 2
                for t in range(6)
                if big_n[t]
            )
            assert r["total_ratio"][s, m] == pytest.approx(vp / vq)
            # One flipped judgment: every valid judgment of a short prompt equally likely.
            changes_q, changes_p = [], []
            for i, p in enumerate(chosen):
                if not is_short[p]:
                    continue
                for t in range(6):
                    for _ in range(int(nn[i, t])):
                        changes_q.append(alpha[t] / big_n[t])
                        changes_p.append(alpha[t] / (big_p[t] * nn[i, t]))
            want_q = np.mean(changes_q) if changes_q else np.nan
            want_p = np.mean(changes_p) if changes_p else np.nan
            assert r["short_error_question"][s, m] == pytest.approx(want_q, nan_ok=True)
            assert r["short_error_prompt"][s, m] == pytest.approx(want_p, nan_ok=True)
