"""method.routing's pieces on hand-made numbers (expected values worked out in the comments)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ingestion.bundle import BundleError, read_questions_file
from method.routing import (
    area_under_frontier,
    choose,
    cost_ranks,
    hcq_frac,
    predict_quality,
    upper_frontier,
)
from method.taxonomy import Taxonomy

TAXONOMY = Taxonomy.from_rows(
    [
        {"capability": "a1", "group_key": "A", "group_order": 1, "capability_order": 1},
        {"capability": "a2", "group_key": "A", "group_order": 1, "capability_order": 2},
        {"capability": "b1", "group_key": "B", "group_order": 2, "capability_order": 3},
        {"capability": "c1", "group_key": "C", "group_order": 3, "capability_order": 4},
    ]
)
NAN = np.nan


def test_restricted_hcq_by_hand():
    # generator 0: a1 .9, a2 .5, b1 .6, c1 .2 ; generator 1: a1 .7, a2 none, b1 .8, c1 .9
    profile = np.array([[0.9, 0.5, 0.6, 0.2], [0.7, NAN, 0.8, 0.9]])
    active = np.array(
        [
            [True, True, False, False],  # only group A: g0 (.9+.5)/2 = .7 ; g1 a1 alone = .7
            [False, True, True, False],  # a2, b1: g0 (.5 + .6)/2 = .55 ; g1 a2 drops: b1 = .8
            [False, False, False, False],  # nothing active: no prediction
        ]
    )
    got = predict_quality(profile, active, TAXONOMY)
    assert got[0] == pytest.approx([0.7, 0.7])
    assert got[1] == pytest.approx([0.55, 0.8])
    assert np.isnan(got[2]).all()
    # unrestricted: g0 = (.7 + .6 + .2) / 3 = .5
    assert hcq_frac(profile[0], np.ones(4, bool), TAXONOMY) == pytest.approx(0.5)


def test_choose_ties_and_eps():
    models = ("m_b", "m_a", "m_c")
    cost = np.array([10.0, 10.0, 1.0])
    ranks = cost_ranks(cost, models)  # m_c (1.0), then m_a before m_b (same cost, id order)
    assert list(ranks) == [2, 1, 0]
    predicted = np.array(
        [
            [0.80, 0.80, 0.70],  # tie between m_b and m_a at the top: same cost -> m_a
            [0.80, 0.79, 0.785],  # eps .02: all within -> cheapest m_c; eps 0 -> m_b
            [NAN, NAN, NAN],  # no prediction at all -> cheapest
            [NAN, 0.5, NAN],  # NaN is never a candidate
        ]
    )
    assert list(choose(predicted, ranks, 0.0)) == [1, 0, 2, 1]
    assert list(choose(predicted, ranks, 0.02)) == [1, 2, 2, 1]
    assert list(choose(predicted, ranks, 0.1)) == [2, 2, 2, 1]


def test_frontier_and_area_by_hand():
    points = [(1.0, 80.0), (2.0, 82.0), (3.0, 90.0), (4.0, 89.0), (10.0, 91.0), (3.0, 85.0)]
    hull = upper_frontier(points)
    # (2, 82) lies below the segment (1, 80) -> (3, 90); (4, 89) is dominated
    assert hull == [(1.0, 80.0), (3.0, 90.0), (10.0, 91.0)]
    # mean over [1, 3]: linear from 80 to 90 -> 85
    assert area_under_frontier(hull, 1.0, 3.0) == pytest.approx(85.0)
    # over [1, 10]: (2 * 85 + 7 * 90.5) / 9
    assert area_under_frontier(hull, 1.0, 10.0) == pytest.approx((2 * 85 + 7 * 90.5) / 9)


def test_questions_file_parquet_accepted_and_missing_refused(tmp_path):
    table = pa.table(
        {
            "prompt_id": ["p", "p"],
            "question_id": ["q1", "q2"],
            "text": ["a dog?", "brown?"],
            "capability": ["animals", "color"],
            "parents": [[], ["q1"]],
        }
    )
    pq.write_table(table, tmp_path / "questions.parquet")
    read = read_questions_file(tmp_path / "questions.parquet")
    assert read["question_order"].to_pylist() == [1, 2]
    with pytest.raises(BundleError, match=r"nope\.jsonl: not found"):
        read_questions_file(tmp_path / "nope.jsonl")


def test_questions_file_cycle_and_duplicate(tmp_path):
    path = tmp_path / "q.jsonl"
    rows = [
        {
            "prompt_id": "p",
            "question_id": "q1",
            "text": "x",
            "capability": "color",
            "parents": ["q2"],
        },
        {
            "prompt_id": "p",
            "question_id": "q2",
            "text": "y",
            "capability": "color",
            "parents": ["q1"],
        },
        {"prompt_id": "p", "question_id": "q2", "text": "z", "capability": "shape", "parents": []},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(BundleError) as error:
        read_questions_file(path)
    listed = [str(p) for p in error.value.problems]
    assert "q.jsonl:1: questions 'q1', 'q2' of prompt 'p' form a cycle of parents" in listed
    assert any(p.startswith("q.jsonl:3: duplicate (prompt_id, question_id)") for p in listed)
