"""method.deficits on arrays small enough to work by hand: the field is the other generators."""

from __future__ import annotations

import numpy as np

from method.deficits import deficits, field_means

NAN = np.nan


def test_the_field_of_each_generator_is_the_others_mean():
    # [M=3, S=1, T=2]: capability 0 scored by all three, capability 1 by m0 and m2 only
    scores = np.array([[[0.2, 0.9]], [[0.5, NAN]], [[0.8, 0.3]]])
    mean, n = field_means(scores)
    np.testing.assert_allclose(mean[:, 0, 0], [(0.5 + 0.8) / 2, (0.2 + 0.8) / 2, (0.2 + 0.5) / 2])
    np.testing.assert_allclose(mean[:, 0, 1], [0.3, (0.9 + 0.3) / 2, 0.9])
    np.testing.assert_array_equal(n[:, 0, :], [[2, 1], [2, 2], [2, 1]])
    gaps = deficits(scores)
    np.testing.assert_allclose(gaps[:, 0, 0], [0.2 - 0.65, 0.5 - 0.5, 0.8 - 0.35])
    assert np.isnan(gaps[1, 0, 1])  # no score of its own: no deficit, though it has a field
    np.testing.assert_allclose(gaps[[0, 2], 0, 1], [0.9 - 0.3, 0.3 - 0.9])


def test_a_generator_alone_has_no_field():
    scores = np.array([[[0.4]], [[NAN]]])
    mean, n = field_means(scores)
    assert np.isnan(mean[0, 0, 0]) and n[0, 0, 0] == 0
    assert np.isnan(deficits(scores)).all()


def test_replicates_keep_their_draws_apart():
    # [draws=2, M=2, S=1, T=1]: each draw's field comes from that draw only
    scores = np.array([[[[0.1]], [[0.7]]], [[[0.6]], [[0.2]]]])
    np.testing.assert_allclose(deficits(scores)[..., 0, 0], [[-0.6, 0.6], [0.4, -0.4]])
