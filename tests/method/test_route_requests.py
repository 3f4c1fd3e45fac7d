"""`method.routing.route_requests` (`qct2i route`, METHOD 12) on hand profiles: only the console
tests reached it until `make mutation` showed its mutants uncovered by any unit test (issue 36).
Every expected value is worked out by hand in the comments."""

from __future__ import annotations

import pyarrow as pa
import pytest

from method.routing import route_requests

# Taxonomy g1 = {c1, c2}, g2 = {c3}; costs: x 2.123456, y and z 1.0 (cost order y, z, x: the
# tie goes to the model id). `en` scores (None = no reference score):
#   x: c1 0.912345678, c2 0.7, c3 0.5 | y: c1 0.8, c2 -, c3 0.5 | z: c1 0.3, c2 0.2, c3 -
# `pooled` gives every capability of x 0.1, y 0.2, z 0.3.
EN = {"x": (0.912345678, 0.7, 0.5), "y": (0.8, None, 0.5), "z": (0.3, 0.2, None)}
POOLED = {"x": (0.1, 0.1, 0.1), "y": (0.2, 0.2, 0.2), "z": (0.3, 0.3, 0.3)}
COST = {"x": 2.123456, "y": 1.0, "z": 1.0}
TAXONOMY = (("c1", "g1", 1, 1), ("c2", "g1", 1, 2), ("c3", "g2", 2, 1))


def profiles(scopes=(("en", EN), ("pooled", POOLED))) -> list[dict]:
    """fct_router_profiles rows, capabilities listed out of reporting order."""
    return [
        {
            "language_scope": scope,
            "model_id": model,
            "capability": capability,
            "capability_group": group,
            "group_order": group_order,
            "capability_order": capability_order,
            "score_frac": table[model][index],
            "cost_gpu_s_per_mp": COST[model],
        }
        for scope, table in scopes
        for model in ("z", "x", "y")
        for index, (capability, group, group_order, capability_order) in reversed(
            list(enumerate(TAXONOMY))
        )
    ]


# Requests in order of first appearance: p2 asks c1 and c3 (twice c1), p1 asks c2, p3 only a
# capability the taxonomy lacks.
QUESTIONS = pa.table(
    {
        "prompt_id": ["p2", "p2", "p1", "p1", "p2", "p3"],
        "capability": ["c1", "c3", "c2", "c2", "c1", "unknown"],
    }
)


def rankings(result) -> list[tuple]:
    return [
        (
            r.prompt_id,
            r.rank,
            r.model_id,
            r.predicted_quality,
            r.cost_gpu_s_per_mp,
            r.is_q_choice,
            r.is_c_choice,
        )
        for r in result.rankings
    ]


# Predictions (restricted HCQ: mean within each group of the active capabilities, then over the
# groups with a score), in points rounded to 4 places; cost rounded to 4 places:
#   p2 (c1, c3): x (0.912345678 + 0.5) / 2 = 70.6173, y (0.8 + 0.5) / 2 = 65, z 0.3 (g2 has
#       none) = 30. Q: x; C within eps 0.1 of 70.6: x and y, the cheaper y.
#   p1 (c2): x 70, z 20, y none (last). Q and C: x (nothing else within 0.1).
#   p3: no prediction at all: cost order y, z, x; Q and C the cheapest, y.
WANT_EN = [
    ("p2", 1, "x", 70.6173, 2.1235, True, False),
    ("p2", 2, "y", 65.0, 1.0, False, True),
    ("p2", 3, "z", 30.0, 1.0, False, False),
    ("p1", 1, "x", 70.0, 2.1235, True, True),
    ("p1", 2, "z", 20.0, 1.0, False, False),
    ("p1", 3, "y", None, 1.0, False, False),
    ("p3", 1, "y", None, 1.0, True, True),
    ("p3", 2, "z", None, 1.0, False, False),
    ("p3", 3, "x", None, 2.1235, False, False),
]


def test_route_requests_by_hand():
    """Guards `qct2i route`'s ranking: requests in order of first appearance, generators by
    predicted quality (points, 4 places) then cost, a generator without a prediction last, the
    language's own profile, Q-Profile-Q the best and Q-Profile-C the cheapest within the live
    epsilon (the warehouse's, when none is asked for); English when no language is named."""
    result = route_requests(QUESTIONS, profiles(), eps=None, live_eps=0.1)  # en by default
    assert (result.language_scope, result.eps) == ("en", 0.1)
    assert rankings(result) == WANT_EN
    assert all(type(r[3]) in (float, type(None)) and type(r[4]) is float for r in WANT_EN)


@pytest.mark.parametrize(
    "eps, live_eps, used, p2_c_choice",
    [(0.02, 0.1, 0.02, "x"), (None, None, 0.0, "x"), (0.0, 0.1, 0.0, "x"), (0.1, None, 0.1, "y")],
)
def test_route_requests_epsilon(eps, live_eps, used, p2_c_choice):
    """Guards the epsilon: the one asked for wins over the warehouse's (even 0), the warehouse's
    when none is asked for, else 0. p2's cheaper y (65) is within 0.1 of x (70.6) but not 0.02."""
    result = route_requests(QUESTIONS, profiles(), "en", eps=eps, live_eps=live_eps)
    assert result.eps == used and type(result.eps) is float
    chosen = [r.model_id for r in result.rankings if r.prompt_id == "p2" and r.is_c_choice]
    assert chosen == [p2_c_choice]


def test_route_requests_fall_back_to_the_pooled_profile():
    """Guards the fallback: a language the warehouse has no profile for (`fr`) uses `pooled`
    (x 0.1, y 0.2, z 0.3 everywhere: z first on every request with a capability, 30 points)."""
    result = route_requests(QUESTIONS, profiles(), "fr", eps=None, live_eps=None)
    assert result.language_scope == "pooled"
    p1 = [(r.model_id, r.predicted_quality) for r in result.rankings if r.prompt_id == "p1"]
    assert p1 == [("z", 30.0), ("y", 20.0), ("x", 10.0)]


def test_route_requests_without_profiles_is_refused():
    """Guards the refusal of an empty warehouse, with the hint to build it."""
    with pytest.raises(ValueError) as refused:
        route_requests(QUESTIONS, [], "en")
    assert str(refused.value) == "the warehouse has no router profiles; run `qct2i build` first"


def test_route_result_as_json_groups_the_ranking_by_request():
    """Guards `qct2i route --json`: the scope, epsilon and one entry per request in order, each
    ranking row every field but the prompt id."""
    result = route_requests(QUESTIONS, profiles(), "en", eps=None, live_eps=0.1)
    keys = ("rank", "model_id", "predicted_quality", "cost_gpu_s_per_mp")
    keys += ("is_q_choice", "is_c_choice")
    requests = {}
    for prompt, *values in WANT_EN:
        requests.setdefault(prompt, []).append(dict(zip(keys, values, strict=True)))
    assert result.as_json() == {
        "language_scope": "en",
        "eps": 0.1,
        "requests": [{"prompt_id": p, "ranking": r} for p, r in requests.items()],
    }
