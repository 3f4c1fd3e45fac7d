"""The routing marts on a simulated world (METHOD 12), checked by independent routes.

World (tests/routing/world.py): flux2-dev is the best fixed generator and the most expensive,
ernie-image is best at relations, z-image-turbo (cheap) equals the others on entities and
attributes and is clearly worse on text, relations and semantics.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from ingestion.bundle import load_bundle
from qct2i.cli import main
from tests.helpers import query, warehouse_in
from tests.worlds.routing import dbt_build_routing

MARGIN_POINTS = 0.20  # dbt var router_non_inferiority_margin_points (its default)


@pytest.fixture(scope="module")
def world(routing_world):
    """(bundle, warehouse), built once per session (tests/conftest.py); read only."""
    return routing_world


def summary(warehouse) -> dict[str, dict[str, float]]:
    rows = query(
        warehouse, "select router, en, zh, bilingual, gpu_s_per_mp from marts.agg_router_summary"
    )
    return {r: {"en": en, "zh": zh, "bilingual": bi, "cost": c} for r, en, zh, bi, c in rows}


# -- an independent route: pure Python from the question records and the text matches ----------


def _hcq(scores: dict[str, float], group_of: dict[str, str]) -> float:
    groups = defaultdict(list)
    for capability, score in scores.items():
        groups[group_of[capability]].append(score)
    views = [sum(v) / len(v) for v in groups.values()]
    return sum(views) / len(views)


def _records(warehouse):
    """Per (model, prompt): language and a list of (capability, is_valid, outcome_masked)."""
    per = defaultdict(list)
    language = {}
    for m, p, lang, cap, valid, y in query(
        warehouse,
        "select model_id, prompt_id, language, capability, is_valid, outcome_masked "
        "from marts.fct_question_records",
    ):
        per[m, p].append((cap, valid, y))
        language[p] = lang
    text = {
        (m, p): (d, length)
        for m, p, d, length in query(
            warehouse,
            "select model_id, prompt_id, edit_distance_utf16, target_length_utf16 "
            "from intermediate.int_text_match where transcription_status = 'ok'",
        )
    }
    taxonomy = query(warehouse, "select capability, group_key, evidence from seeds.capabilities")
    group_of = {c: g for c, g, _ in taxonomy}
    text_capability = next(c for c, _, e in taxonomy if e == "transcription")
    return per, language, text, group_of, text_capability


def routed_quality(assignment: dict[str, str], data) -> dict[str, float]:
    """HCQ per language of the virtual generator: prompt -> the model whose records it takes."""
    per, language, text, group_of, text_capability = data
    sums = defaultdict(lambda: [0, 0])
    for prompt, model in assignment.items():
        lang = language[prompt]
        for cap, valid, y in per[model, prompt]:
            if cap != text_capability and valid:
                sums[lang, cap][0] += y
                sums[lang, cap][1] += 1
        if (model, prompt) in text:
            d, length = text[model, prompt]
            sums[lang, text_capability][0] += length - d
            sums[lang, text_capability][1] += length
    out = {}
    for lang in sorted(set(language.values())):
        scores = {
            cap: max(0.0, n / den) for (lg, cap), (n, den) in sums.items() if lg == lang and den
        }
        out[lang] = 100 * _hcq(scores, group_of)
    out["bilingual"] = (out["en"] + out["zh"]) / 2
    return out


def test_summary_reproduced_from_decisions_and_records(world):
    _, warehouse = world
    data = _records(warehouse)
    got = summary(warehouse)
    decisions = defaultdict(dict)
    cost = defaultdict(list)
    for router, prompt, model, c in query(
        warehouse,
        "select router, prompt_id, model_id, cost_gpu_s_per_mp from marts.fct_router_decisions",
    ):
        decisions[router][prompt] = model
        cost[router].append(c)
    assert set(decisions) | {"uniform_random"} == set(got)
    for router, assignment in decisions.items():
        expected = routed_quality(assignment, data)
        for scope in ("en", "zh", "bilingual"):
            assert got[router][scope] == pytest.approx(expected[scope], abs=1e-9), (router, scope)
        assert got[router]["cost"] == pytest.approx(sum(cost[router]) / len(cost[router]))
    # uniform random: the expectation over its stored draws
    draws = defaultdict(dict)
    for draw, prompt, model in query(
        warehouse, "select draw, prompt_id, model_id from intermediate.int_router_uniform_draws"
    ):
        draws[draw][prompt] = model
    assert len(draws) == 100
    per_draw = [routed_quality(assignment, data) for assignment in draws.values()]
    for scope in ("en", "zh", "bilingual"):
        expected = sum(q[scope] for q in per_draw) / len(per_draw)
        assert got["uniform_random"][scope] == pytest.approx(expected, abs=1e-9)


def test_fixed_routers_equal_the_leaderboard(world):
    _, warehouse = world
    got = summary(warehouse)
    for model, scope, total in query(
        warehouse,
        "select model_id, language_scope, hcq_total from marts.fct_hcq_leaderboard "
        "where language_scope in ('en', 'zh', 'bilingual')",
    ):
        assert got[f"fixed:{model}"][scope] == pytest.approx(total, abs=1e-9)


def test_routers_on_a_world_with_a_cheap_partial_equal(world):
    _, warehouse = world
    got = summary(warehouse)
    fixed = {r: v for r, v in got.items() if r.startswith("fixed:")}
    best = max(fixed.values(), key=lambda v: v["bilingual"])
    assert best is got["fixed:flux2-dev"]
    c, q = got["q_profile_c"], got["q_profile_q"]
    assert c["cost"] < best["cost"]
    assert c["bilingual"] >= best["bilingual"] - MARGIN_POINTS
    assert q["bilingual"] >= best["bilingual"]
    assert got["uniform_random"]["bilingual"] < best["bilingual"]
    others = [v["bilingual"] for r, v in got.items() if r != "oracle"]
    assert got["oracle"]["bilingual"] > max(others)
    # the cheap generator is used, and only for requests without text, relations or semantics
    rows = query(
        warehouse,
        "select d.prompt_id, list(distinct r.capability_group) "
        "from marts.fct_router_decisions d join marts.fct_question_records r "
        "on r.prompt_id = d.prompt_id and r.model_id = d.model_id "
        "where d.router = 'q_profile_c' and d.model_id = 'z-image-turbo' group by d.prompt_id",
    )
    assert rows
    bad_groups = {"text", "relations", "semantics"}
    assert sum(bool(set(groups) & bad_groups) for _, groups in rows) <= len(rows) // 10


def test_paired_rows_match_the_summary(world):
    _, warehouse = world
    got = summary(warehouse)
    rows = query(
        warehouse,
        "select router, reference_model_id, diff, ci_lo, ci_hi, cost_saving_frac, non_inferior "
        "from marts.fct_router_paired",
    )
    # default references: the two best fixed generators by bilingual quality
    assert {r[1] for r in rows} == {"flux2-dev", "ernie-image"}
    for router, reference, diff, lo, hi, saving, non_inferior in rows:
        ref = got[f"fixed:{reference}"]
        if router == f"fixed:{reference}":  # paired with itself: 0 in every draw
            assert (diff, lo, hi, saving, non_inferior) == (0.0, 0.0, 0.0, 0.0, True)
        if router != "uniform_random":
            assert diff == pytest.approx(got[router]["bilingual"] - ref["bilingual"], abs=1e-9)
        else:  # a ratio of expectations over the draws, near the summary's mean of draws
            assert diff == pytest.approx(got[router]["bilingual"] - ref["bilingual"], abs=0.5)
        assert lo <= hi
        assert saving == pytest.approx(1 - got[router]["cost"] / ref["cost"])
        assert non_inferior == (lo > -MARGIN_POINTS)


def test_frontier_and_live_eps(world):
    _, warehouse = world
    rows = query(
        warehouse,
        "select point_kind, eps, bilingual, gpu_s_per_mp, on_frontier, is_live_eps, aiq, "
        "aiq_fixed_only from marts.agg_router_frontier",
    )
    grid = [r for r in rows if r[0] == "q_profile_c"]
    fixed = [r for r in rows if r[0] == "fixed"]
    assert len(grid) == 21 and len(fixed) == 3
    best_fixed = max(r[2] for r in fixed)
    live = [r for r in grid if r[5]]
    assert len(live) == 1
    # the live eps: the largest grid value whose quality is not below the best fixed generator
    clearing = [r[1] for r in grid if r[2] >= best_fixed - 1e-9]
    assert live[0][1] == max(clearing, default=0.0)
    # no frontier vertex is dominated (cheaper-or-equal and better)
    vertices = [(r[3], r[2]) for r in rows if r[4]]
    for cost, quality in vertices:
        assert not any(c <= cost and q > quality for c, q in vertices if (c, q) != (cost, quality))
    # routing can only add area over the fixed generators' own hull
    assert rows[0][6] >= rows[0][7] - 1e-9


def test_leakage_own_judgments_never_change_own_decision(world, tmp_path):
    """Flip every judgment of a few requests (all generators), rebuild: their own out-of-fold
    Q and C decisions and predictions stay exactly as they were."""
    bundle, warehouse = world
    before = own_decisions(warehouse)
    # requests of one fold, so that none of them is in another's reference folds: each one's
    # flip can reach the others' decisions only through a leak
    changed = {
        p
        for (p,) in query(
            warehouse,
            "select prompt_id from intermediate.int_router_requests where fold = 2 "
            "order by md5(prompt_id) limit 6",
        )
    }
    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    lines = (copy / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
    flipped = []
    for line in lines:
        row = json.loads(line)
        if row["prompt_id"] in changed and row["answer"] is not None:
            row["answer"] = "no" if row["answer"] == "yes" else "yes"
        flipped.append(json.dumps(row, ensure_ascii=False))
    (copy / "judgments.jsonl").write_text("\n".join(flipped) + "\n", encoding="utf-8")
    other = warehouse_in(tmp_path / "flipped-wh")
    load_bundle(copy, other)
    dbt_build_routing(other)
    after = own_decisions(other)
    assert len(changed) == 6
    assert sum(key[1] in changed for key in before) == 2 * len(changed)  # Q and C each
    for key in before:
        if key[1] in changed:
            assert after[key] == before[key], key
    # the flip is real: the realised quality (the oracle's view) moved
    assert summary(other)["oracle"]["bilingual"] != summary(warehouse)["oracle"]["bilingual"]


def own_decisions(warehouse):
    """(router, prompt) -> (model, predicted quality) of the two Q-Profile routers."""
    return {
        (r, p): (m, q)
        for r, p, m, q in query(
            warehouse,
            "select router, prompt_id, model_id, predicted_quality_frac "
            "from marts.fct_router_decisions where router in ('q_profile_q', 'q_profile_c')",
        )
    }


# -- qct2i route --------------------------------------------------------------------------------


def _write(path: Path, rows) -> Path:
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


NEW_REQUESTS = [
    {
        "prompt_id": "cat",
        "question_id": "q1",
        "text": "a cat?",
        "capability": "animals",
        "parents": [],
    },
    {
        "prompt_id": "cat",
        "question_id": "q2",
        "text": "black?",
        "capability": "color",
        "parents": ["q1"],
    },
    {
        "prompt_id": "poster",
        "question_id": "q1",
        "text": "a poster?",
        "capability": "man_made",
        "parents": [],
    },
    {
        "prompt_id": "poster",
        "question_id": "q2",
        "text": "says SALE?",
        "capability": "text_rendering",
        "parents": ["q1"],
        "text_target": "SALE",
    },
    {
        "prompt_id": "poster",
        "question_id": "q3",
        "text": "retro?",
        "capability": "style",
        "parents": [],
    },
]


def test_route_ranks_new_requests(world, tmp_path, monkeypatch, capsys):
    _, warehouse = world
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(warehouse))
    file = _write(tmp_path / "requests.jsonl", NEW_REQUESTS)
    assert main(["route", str(file), "--json", "--language", "zh", "--eps", "0.03"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["language_scope"] == "zh" and out["eps"] == 0.03
    # independent: restricted HCQ by hand from the zh profile rows
    profile = defaultdict(dict)
    cost, group_of = {}, {}
    for m, cap, group, score, c in query(
        warehouse,
        "select model_id, capability, capability_group, score_frac, cost_gpu_s_per_mp "
        "from marts.fct_router_profiles where language_scope = 'zh'",
    ):
        if score is not None:
            profile[m][cap] = score
        cost[m], group_of[cap] = c, group
    caps = {"cat": {"animals", "color"}, "poster": {"man_made", "text_rendering", "style"}}
    for request in out["requests"]:
        active = caps[request["prompt_id"]]
        expected = {
            m: 100 * _hcq({c: s for c, s in scores.items() if c in active}, group_of)
            for m, scores in profile.items()
        }
        ranking = request["ranking"]
        assert [r["model_id"] for r in ranking] == sorted(
            expected, key=lambda m: (-expected[m], cost[m], m)
        )
        for r in ranking:
            # the CLI rounds to 4 decimals
            want = expected[r["model_id"]]
            assert r["predicted_quality"] == pytest.approx(want, abs=5e-5 + 1e-9)
        best = max(expected.values())
        q_choice = [r["model_id"] for r in ranking if r["is_q_choice"]]
        c_choice = [r["model_id"] for r in ranking if r["is_c_choice"]]
        assert q_choice == [ranking[0]["model_id"]]
        within = [m for m in expected if expected[m] >= best - 3.0 - 1e-9]
        assert c_choice == [min(within, key=lambda m: (cost[m], m))]


def test_route_uses_the_warehouse_eps_and_prints_a_table(world, tmp_path, monkeypatch, capsys):
    _, warehouse = world
    monkeypatch.setenv("QCT2I_WAREHOUSE", str(warehouse))
    ((live,),) = query(warehouse, "select eps from marts.agg_router_frontier where is_live_eps")
    file = _write(tmp_path / "requests.jsonl", NEW_REQUESTS)
    assert main(["route", str(file)]) == 0
    out = capsys.readouterr().out
    assert f"eps {live:.3f}" in out
    assert "request cat" in out and "request poster" in out


def test_route_refuses_a_malformed_request_file(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(NEW_REQUESTS[0])
        + "\n"
        + json.dumps({**NEW_REQUESTS[1], "capability": "colour"})
        + "\n"
        + "{not json\n"
        + json.dumps({**NEW_REQUESTS[2], "parents": ["q7"]})
        + "\n",
        encoding="utf-8",
    )
    assert main(["route", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:2: unknown capability 'colour'" in err
    assert "bad.jsonl:3: not valid JSON" in err
    assert "bad.jsonl:4: parent 'q7' is not a question of prompt 'poster'" in err
