"""`method.structure.coupling_prompt_effects`: the per-prompt coupling terms (Delta of each
context, and the contrasts with `disc`) on a hand-computed world, with leave-one-prompt-out
marginals.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from method.structure import coupling_bootstrap, coupling_intervals, coupling_prompt_effects

NAN = None
S0, S1 = "a|b|root|descendant|0|1", "c|d|root|descendant|0|1"

# (prompt, language, context, stratum, (y1, y2)) for model m; each pair gets fresh question ids.
PAIRS = [
    ("p0", "en", "edge", S0, (1, 1)),
    ("p0", "en", "edge", S1, (1, 0)),  # S1 occurs in no other prompt: no marginal, no Delta
    ("p0", "en", "disc", S0, (1, 0)),
    ("p0", "en", "nonanc", S0, (1, 1)),
    ("p1", "en", "edge", S0, (0, 0)),
    ("p1", "en", "disc", S0, (1, 1)),
    ("p1", "en", "nonanc", S0, (1, 0)),
    ("p2", "en", "edge", S0, (1, 1)),
    ("p2", "en", "edge", S0, (1, 0)),
    ("p2", "en", "edge", S0, (1, NAN)),  # missing judgment: the pair is left out
    ("p2", "en", "disc", S0, (0, 1)),
    ("p3", "zh", "edge", S0, (1, 1)),  # the only zh prompt: languages are never pooled
]


def hand_tables(pairs=PAIRS):
    pair_rows, records = [], []
    for k, (prompt, language, context, stratum, (y1, y2)) in enumerate(pairs):
        q1, q2 = f"q{2 * k}", f"q{2 * k + 1}"
        pair_rows.append(
            {
                "prompt_id": prompt,
                "language": language,
                "context": context,
                "question_id_1": q1,
                "question_id_2": q2,
                "stratum_key": stratum,
            }
        )
        for q, y in ((q1, y1), (q2, y2)):
            records.append({"model_id": "m", "prompt_id": prompt, "question_id": q, "outcome": y})
    return pa.Table.from_pylist(pair_rows), pa.Table.from_pylist(records)


def effects_by_key(table: pa.Table) -> dict[tuple[str, str], float]:
    return {(r["prompt_id"], r["effect"]): r["effect_value"] for r in table.to_pylist()}


def test_coupling_deltas_use_leave_one_prompt_out_marginals():
    got = effects_by_key(coupling_prompt_effects(*hand_tables()))
    # edge, stratum S0 (pairs judged at both ends): p0 (1,1); p1 (0,0); p2 (1,1), (1,0).
    # p0: joint 1; others p1+p2: pi1 = 2/3, pi2 = 1/3  -> 1 - 2/9 = 7/9
    # p1: joint 0; others p0+p2: pi1 = 3/3, pi2 = 2/3  -> -2/3
    # p2: joint 1/2; others p0+p1: pi1 = 1/2, pi2 = 1/2 -> 1/4
    expected_edge = {"p0": 7 / 9, "p1": -2 / 3, "p2": 1 / 4}
    # disc S0: p0 (1,0); p1 (1,1); p2 (0,1).
    # p0: joint 0; others p1+p2: pi1 = 1/2, pi2 = 2/2 -> -1/2
    # p1: 1 - (1/2)(1/2) = 3/4;  p2: 0 - (2/2)(1/2) = -1/2
    expected_disc = {"p0": -1 / 2, "p1": 3 / 4, "p2": -1 / 2}
    # nonanc S0: p0 (1,1), p1 (1,0). p0: 1 - 1*0 = 1; p1: 0 - 1*1 = -1
    expected_nonanc = {"p0": 1.0, "p1": -1.0}
    for prompt, value in expected_edge.items():
        assert got[prompt, "edge"] == pytest.approx(value)
    for prompt, value in expected_disc.items():
        assert got[prompt, "disc"] == pytest.approx(value)
    for prompt, value in expected_nonanc.items():
        assert got[prompt, "nonanc"] == pytest.approx(value)
    # contrasts: Delta_k - Delta_disc over the shared stratum S0
    assert got["p0", "edge_vs_disc"] == pytest.approx(7 / 9 + 1 / 2)
    assert got["p1", "edge_vs_disc"] == pytest.approx(-2 / 3 - 3 / 4)
    assert got["p2", "edge_vs_disc"] == pytest.approx(1 / 4 + 1 / 2)
    assert got["p0", "nonanc_vs_disc"] == pytest.approx(1 + 1 / 2)
    assert got["p1", "nonanc_vs_disc"] == pytest.approx(-1 - 3 / 4)
    assert ("p2", "nonanc_vs_disc") not in got  # p2 has no nonanc pair
    assert not any(prompt == "p3" for prompt, _ in got)  # zh: no other prompt, no marginal


def test_own_prompt_never_enters_its_marginal():
    """Flipping p0's own outcomes changes p0's joint term only, never its marginals."""
    flipped = [
        (p, lang, c, s, (1 - y[0], y[1]) if (p, c, s) == ("p0", "edge", S0) else y)
        for p, lang, c, s, y in PAIRS
    ]
    before = effects_by_key(coupling_prompt_effects(*hand_tables()))
    after = effects_by_key(coupling_prompt_effects(*hand_tables(flipped)))
    # p0 edge: joint 1 -> 0, marginals from p1 and p2 unchanged: 7/9 - 1 = -2/9
    assert after["p0", "edge"] == pytest.approx(before["p0", "edge"] - 1)
    # p1's marginals do include p0: pi1 = (0 + 2) / 3 instead of 3 / 3
    assert after["p1", "edge"] == pytest.approx(0 - (2 / 3) * (2 / 3))


def test_prompt_effects_name_each_effects_kind_model_and_language():
    """Guards int_coupling_prompt_effects' label columns (issue 36, `make mutation`): every row
    is the model's, in its prompt's language; the three contexts are of kind `context`, the two
    contrasts with disc of kind `contrast`."""
    rows = coupling_prompt_effects(*hand_tables()).to_pylist()
    kinds = {r["effect"]: r["effect_kind"] for r in rows}
    assert kinds == {
        "edge": "context",
        "disc": "context",
        "nonanc": "context",
        "edge_vs_disc": "contrast",
        "nonanc_vs_disc": "contrast",
    }
    assert {(r["model_id"], r["language"]) for r in rows} == {("m", "en")}


def test_prompt_effects_of_a_world_without_pairs_is_an_empty_typed_table():
    """Guards the no-pairs path (a bundle without any question pair): no row, and the mart's
    columns with their types, rather than an error."""
    pairs, records = hand_tables()
    got = coupling_prompt_effects(pairs.slice(0, 0), records.slice(0, 0))
    assert got.num_rows == 0
    assert [(f.name, f.type) for f in got.schema] == [
        ("model_id", pa.string()),
        ("language", pa.string()),
        ("prompt_id", pa.string()),
        ("effect_kind", pa.string()),
        ("effect", pa.string()),
        ("effect_value", pa.float64()),
        ("n_strata", pa.int64()),
    ]


def test_one_prompt_has_no_marginal_and_no_effect():
    """Guards the sizes of a world with a single prompt, context and stratum (one cell, one
    group): no other prompt gives a marginal, so there is no row (sizes counted one short
    would be negative and refused by numpy)."""
    got = coupling_prompt_effects(*hand_tables(PAIRS[:1]))
    assert got.num_rows == 0


def test_coupling_intervals_carry_the_bootstrap_rows_into_the_marts_columns():
    """Guards int_coupling_intervals, the Arrow glue over `coupling_bootstrap` (tested on its
    own in test_coupling.py): one row per bootstrap row, in its order, each field in its column
    (units as `n_prompts`, the method as `bootstrap_method`), the draws asked for as `n_draws`,
    and the kind by the effect's name: the three contexts `context`, the two contrasts
    `contrast`."""
    pairs, records = hand_tables()
    want = coupling_bootstrap(pairs, records, draws=5, seed=1, method="exact")
    got = coupling_intervals(pairs, records, draws=5, seed=1, method="exact").to_pylist()
    kind = {"edge": "context", "disc": "context", "nonanc": "context"}
    kind |= {"edge_vs_disc": "contrast", "nonanc_vs_disc": "contrast"}
    assert len(want) > 0
    assert got == [
        {
            "language": r["language"],
            "model_id": r["model_id"],
            "effect_kind": kind[r["effect"]],
            "effect": r["effect"],
            "estimate": r["estimate"],
            "ci_lo": r["ci_lo"],
            "ci_hi": r["ci_hi"],
            "n_prompts": r["n_units"],
            "n_draws": 5,
            "bootstrap_method": "exact",
        }
        for r in want
    ]


def refused(pairs, records) -> str:
    with pytest.raises(ValueError) as error:
        coupling_prompt_effects(pa.Table.from_pylist(pairs), pa.Table.from_pylist(records))
    return str(error.value)


def test_pairs_naming_questions_without_records_are_refused():
    """Guards the refusals of pairs the records do not back, naming the endpoint column: a
    question id no record has, and a known id under another prompt (p1's q1 exists only in
    p0; its key sorts after every record's, the edge of the lookup); an unknown context."""
    records = [
        {"model_id": "m", "prompt_id": p, "question_id": q, "outcome": 1}
        for p, q in (("p0", "q0"), ("p0", "q1"), ("p1", "q0"))
    ]

    def pair(prompt, q1, q2, context="edge"):
        return {
            "prompt_id": prompt,
            "language": "en",
            "context": context,
            "question_id_1": q1,
            "question_id_2": q2,
            "stratum_key": S0,
        }

    message = "pairs name questions without records ({})"
    assert refused([pair("p0", "q0", "q9")], records) == message.format("question_id_2")
    assert refused([pair("p1", "q1", "q0")], records) == message.format("question_id_1")
    assert refused([pair("p0", "q0", "q1", "bogus")], records) == (
        "unknown pair contexts: values outside ('edge', 'nonanc', 'disc')...: ['bogus']"
    )


def test_coupling_bootstrap_defaults_to_auto_and_refuses_bad_arguments():
    """Guards the bootstrap's defaults and refusals: without a method, `auto` picks the exact
    bootstrap for a world this small (in coupling_intervals too); one draw is enough; no draw,
    or an unknown method, is refused with the value in the message."""
    pairs, records = hand_tables()
    assert {r["method"] for r in coupling_bootstrap(pairs, records, draws=1, seed=1)} == {"exact"}
    got = coupling_intervals(pairs, records, draws=2, seed=1)
    assert set(got.column("bootstrap_method").to_pylist()) == {"exact"}
    with pytest.raises(ValueError) as refused:
        coupling_bootstrap(pairs, records, draws=0, seed=1)
    assert str(refused.value) == "draws must be >= 1, got 0"
    with pytest.raises(ValueError) as refused:
        coupling_bootstrap(pairs, records, draws=2, seed=1, method="bogus")
    assert str(refused.value) == (
        "method must be one of ('auto', 'exact', 'linearised'), got 'bogus'"
    )
