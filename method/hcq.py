"""HCQ (Eq. 4) on numpy arrays: the rule of `macros/hcq.sql` for many totals at once.

The bootstrap (thousands of replicate totals per model and scope) and the router need HCQ outside
SQL. Semantics are the macro's, exactly: the mean of the available capability scores within each
reporting group, then the mean of the available group views. A NaN capability score drops out of
its group; a group with no score drops out of the total; no score at all gives a NaN total. Group
weights therefore come from the taxonomy (the `capability -> group` mapping passed in, read from
`seeds/capabilities.csv`), never from constants.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def group_membership(capability_groups: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """The distinct groups (in first-seen order) and the one-hot matrix [capabilities x groups]."""
    groups = tuple(dict.fromkeys(capability_groups))
    membership = np.zeros((len(capability_groups), len(groups)))
    for i, group in enumerate(capability_groups):
        membership[i, groups.index(group)] = 1.0
    return groups, membership


def hcq_group_views(
    scores: np.ndarray, capability_groups: Sequence[str]
) -> tuple[tuple[str, ...], np.ndarray]:
    """Group views [..., n_groups]: the mean of each group's non-NaN scores (NaN if none).

    `scores` has shape [..., n_capabilities], the last axis in the order of `capability_groups`.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.shape[-1] != len(capability_groups):
        raise ValueError(
            f"scores have {scores.shape[-1]} capabilities, the mapping {len(capability_groups)}"
        )
    groups, membership = group_membership(capability_groups)
    available = ~np.isnan(scores)
    sums = np.where(available, scores, 0.0) @ membership
    counts = available.astype(float) @ membership
    with np.errstate(invalid="ignore", divide="ignore"):
        views = np.where(counts > 0, sums / counts, np.nan)
    return groups, views


def hcq_total(scores: np.ndarray, capability_groups: Sequence[str]) -> np.ndarray:
    """HCQ totals [...] from capability scores [..., n_capabilities] (NaN = no evidence)."""
    _, views = hcq_group_views(scores, capability_groups)
    present = ~np.isnan(views)
    n_present = present.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            n_present > 0, np.where(present, views, 0.0).sum(axis=-1) / n_present, np.nan
        )


def hcq_weights(available: np.ndarray, capability_groups: Sequence[str]) -> np.ndarray:
    """The weight alpha_t = 1 / (G * T_g(t)) HCQ gives each available capability (0 if unavailable).

    G and T_g count only available capabilities and non-empty groups, so that
    `hcq_total(s) == sum_t hcq_weights(~isnan(s)) * s_t` wherever the total is defined.
    """
    available = np.asarray(available, dtype=bool)
    _, membership = group_membership(capability_groups)
    per_group = available.astype(float) @ membership  # T_g over available capabilities
    n_groups = (per_group > 0).sum(axis=-1, keepdims=True)  # G over non-empty groups
    t_of_capability = per_group @ membership.T  # T_g(t) broadcast back to capabilities
    with np.errstate(invalid="ignore", divide="ignore"):
        weights = np.where(available, 1.0 / (n_groups * t_of_capability), 0.0)
    return weights
