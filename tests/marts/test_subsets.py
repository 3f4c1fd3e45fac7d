"""Subset plans and estimates (METHOD 16) through the real import, dbt build and console script.

World: 300 simulated concepts, six generators. `NEW` plays the new generator: warehouse `A` holds
the other five (fully evaluated), `qct2i plan` draws an `irt` plan from it, warehouse `B` adds
`NEW`'s evidence on the plan's concepts only, and warehouse `FULL` holds every generator on every
concept: its leaderboard is the truth the estimate is checked against.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ingestion.bundle import read_bundle, read_questions_file
from ingestion.sources.simulator import SimulationConfig, simulate
from reporting.leaderboard import format_leaderboard
from tests.helpers import build_warehouse, dbt_build, query, run_main, warehouse_in

MODELS = ("ernie-image", "qwen-image", "flux2-dev", "hidream-i1", "lens", "glm-image")
NEW = "flux2-dev"
SUBSET_SELECTOR = (
    "+fct_subset_estimates",
    "+agg_subset_validation",
    "+fct_hcq_leaderboard",
    "+fct_question_records",
    "resource_type:seed",
)
GROUPS_SQL = "select capability, group_key from seeds.capabilities"


def filtered_bundle(source: Path, out: Path, keep) -> Path:
    """A copy of the JSONL bundle `source` keeping the rows for which `keep(table, row)` holds."""
    out.mkdir(parents=True)
    concept_of = {}
    for line in (source / "prompts.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        concept_of[row["prompt_id"]] = row["concept_id"]
    for path in source.glob("*.jsonl"):
        kept = []
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            concept = concept_of.get(row.get("prompt_id"))
            if keep(path.stem, row, concept):
                kept.append(line)
        (out / path.name).write_text("".join(f"{k}\n" for k in kept), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("subsets")
    config = SimulationConfig(concepts=300, seed=4, models=MODELS)
    bundle = simulate(root / "bundle", config).out_dir
    full = build_warehouse(bundle, warehouse_in(root / "full-wh"), SUBSET_SELECTOR)
    without_new = filtered_bundle(
        bundle, root / "a_bundle", lambda table, row, concept: row.get("model_id") != NEW
    )
    a = build_warehouse(without_new, warehouse_in(root / "a-wh"), SUBSET_SELECTOR)
    plan_dir = root / "plan"
    planned = run_main(
        ["plan", "--budget", "0.2", "--strategy", "irt", "--seed", "3", "--out", str(plan_dir)], a
    )
    assert planned.returncode == 0, planned.stderr
    plan = json.loads((plan_dir / "plan.json").read_text())
    drawn = set(plan["concepts"])
    partial = filtered_bundle(
        bundle,
        root / "b_bundle",
        lambda table, row, concept: (
            table == "generators" or row.get("model_id") != NEW or concept in drawn
        ),
    )
    b = build_warehouse(partial, warehouse_in(root / "b-wh"), SUBSET_SELECTOR)
    # the same warehouse with the design-only estimator (dbt var subset_estimator)
    b_ht = shutil.copy(b, warehouse_in(root / "b-ht-wh"))
    dbt_build(
        b_ht, ("int_subset_estimates", "fct_subset_estimates"),
        ("--vars", "{subset_estimator: ht}"),
    )  # fmt: skip
    return {
        "full": full, "a": a, "b": b, "b_ht": b_ht, "plan_dir": plan_dir, "plan": plan,
        "stdout": planned, "b_bundle": partial,
    }  # fmt: skip


def test_plan_folder_passes_the_bundle_rules(world, tmp_path):
    plan_dir, plan = world["plan_dir"], world["plan"]
    assert plan["strategy"] == "irt" and plan["n_concepts"] == 60  # 20% of 300 concepts
    assert NEW not in plan["references"] and len(plan["references"]) == 5
    questions = read_questions_file(plan_dir / "questions.jsonl")
    prompts = [json.loads(x) for x in (plan_dir / "prompts.jsonl").read_text().splitlines()]
    # both languages of every chosen concept, nothing else
    assert sorted({p["concept_id"] for p in prompts}) == sorted(plan["concepts"])
    assert len(prompts) == 2 * 60 == plan["n_prompts"]
    assert set(questions.column("prompt_id").to_pylist()) == {p["prompt_id"] for p in prompts}
    # the same questions the warehouse holds for those prompts
    (n_questions,) = query(
        world["a"],
        "select count(*) from raw.questions as q inner join raw.prompts as p using (prompt_id) "
        f"where p.concept_id in ({', '.join(repr(c) for c in plan['concepts'])})",
    )[0]
    assert questions.num_rows == n_questions
    # once the new generator's judgments are added, the folder is a bundle the importer takes
    lines = [
        json.dumps({"prompt_id": p, "model_id": "new-gen", "question_id": q, "answer": "yes"})
        for p, q in zip(
            questions.column("prompt_id").to_pylist(),
            questions.column("question_id").to_pylist(),
            strict=True,
        )
    ]
    (plan_dir / "judgments.jsonl").write_text("\n".join(lines) + "\n")
    try:
        tables = read_bundle(plan_dir)
    finally:
        (plan_dir / "judgments.jsonl").unlink()
    assert tables["prompts"].num_rows == 120 and tables["judgments"].num_rows == n_questions
    assert "expected cost about" in world["stdout"].stdout


def test_plan_refuses_a_used_folder(world, tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x.txt").write_text("keep me")
    result = run_main(["plan", "--budget", "0.1", "--out", str(tmp_path / "used")], world["a"])
    assert result.returncode == 2 and "not an empty folder" in result.stderr
    assert (tmp_path / "used" / "x.txt").read_text() == "keep me"


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["--budget", "1.5"], "--budget must be a fraction in (0, 1], not 1.5"),
        (["--budget", "0.1", "--strategy", "adaptive"], "needs --model and --target-rank-width"),
    ],
)
def test_plan_refuses_bad_arguments_with_a_message(world, tmp_path, args, reason):
    result = run_main(["plan", *args, "--out", str(tmp_path / "p")], world["a"])
    assert result.returncode == 2 and reason in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "p").exists()


def test_leaderboard_marks_the_subset_evaluated_generator(world):
    """fct_hcq_leaderboard's `evaluation` / `prompt_coverage_frac`, against prompt counts read by
    hand from B's bundle files: a generator's prompts are those it has a judgment on, the
    benchmark's those any generator has one on."""
    bundle = world["b_bundle"]
    language_of = {
        row["prompt_id"]: row["language"]
        for row in map(json.loads, (bundle / "prompts.jsonl").read_text().splitlines())
    }
    judged: dict[str, set[str]] = {}
    for row in map(json.loads, (bundle / "judgments.jsonl").read_text().splitlines()):
        if row.get("judge_id", "default") == "default":  # the official judge
            judged.setdefault(row["model_id"], set()).add(row["prompt_id"])
    benchmark = set().union(*judged.values())
    scopes = {"en": {"en"}, "zh": {"zh"}, "pooled": {"en", "zh"}, "bilingual": {"en", "zh"}}

    def share(prompts: set[str], languages: set[str]) -> float:
        in_scope = [p for p in benchmark if language_of[p] in languages]
        return sum(p in prompts for p in in_scope) / len(in_scope)

    expected_new = {scope: share(judged[NEW], langs) for scope, langs in scopes.items()}
    assert all(0 < v < 1 for v in expected_new.values())  # a real subset in every scope
    rows = query(
        world["b"],
        "select model_id, language_scope, evaluation, prompt_coverage_frac "
        "from marts.fct_hcq_leaderboard",
    )
    assert {(m, s) for m, s, _, _ in rows} == {(m, s) for m in MODELS for s in scopes}
    for model, scope, evaluation, frac in rows:
        if model == NEW:
            assert evaluation == "subset"
            assert frac == pytest.approx(expected_new[scope], abs=1e-12), scope
        else:
            assert (evaluation, frac) == ("full", 1.0), (model, scope)
    # the fully evaluated world: every generator full
    assert query(
        world["full"],
        "select distinct evaluation, prompt_coverage_frac from marts.fct_hcq_leaderboard",
    ) == [("full", 1.0)]
    # the terminal leaderboard names the subset and where the corrected estimate is
    display = query(
        world["b"],
        f"select distinct display_name from marts.fct_hcq_leaderboard where model_id = '{NEW}'",
    )
    board = format_leaderboard(world["b"], ("bilingual",)).splitlines()
    marked = [line for line in board if "(subset:" in line]
    assert len(marked) == 1 and display[0][0] in marked[0]
    assert f"(subset: {100 * expected_new['bilingual']:.0f}% of prompts" in marked[0]
    assert "fct_subset_estimates" in marked[0]


def hajek_total(warehouse: Path, model: str, inclusion: dict[str, float], language: str) -> float:
    """An independent route to the estimate: Eq. 2 counts from fct_question_records and Eq. 3
    sums from int_text_match, each concept weighted by 1 / pi, then group means (METHOD 4)."""
    cases = " ".join(f"when '{c}' then {1 / p!r}" for c, p in inclusion.items())
    weight = f"(case concept_id {cases} end)"
    rows = query(
        warehouse,
        f"""
        with records as (
            select r.capability,
                sum({weight} * (r.is_valid and r.outcome = 1)::int) as num,
                sum({weight} * r.is_valid::int) as den
            from marts.fct_question_records as r
            where r.model_id = '{model}' and r.language = '{language}'
            group by all
        ),
        texts as (
            select c.capability,
                sum({weight} * (t.target_length_utf16 - t.edit_distance_utf16)) as num,
                sum({weight} * t.target_length_utf16) as den
            from intermediate.int_text_match as t
            inner join staging.stg_prompts as p using (prompt_id)
            cross join seeds.capabilities as c
            where t.model_id = '{model}' and p.language = '{language}'
                and t.transcription_status = 'ok' and c.evidence = 'transcription'
            group by all
        ),
        scores as (
            select capability, num / den as score from records
            where capability not in (select capability from texts)
            union all
            select capability, num / den from texts
        )
        select c.group_key, avg(s.score)
        from scores as s inner join seeds.capabilities as c using (capability)
        group by all
        """,
    )
    return sum(v for _, v in rows) / len(rows)


def estimates(warehouse: Path) -> dict[str, tuple]:
    rows = query(
        warehouse,
        "select language_scope, n_prompts, hcq_total, ci_lo, ci_hi, rank, rank_lo, rank_hi, "
        f"strategy, estimator from marts.fct_subset_estimates where model_id = '{NEW}'",
    )
    return {r[0]: r[1:] for r in rows}


def test_ht_estimate_reweights_the_plan(world):
    b, plan = world["b_ht"], world["plan"]
    got = estimates(b)
    en = hajek_total(b, NEW, plan["concepts"], "en")
    zh = hajek_total(b, NEW, plan["concepts"], "zh")
    assert got["en"][1] == pytest.approx(100 * en, abs=1e-9)
    assert got["zh"][1] == pytest.approx(100 * zh, abs=1e-9)
    assert got["bilingual"][1] == pytest.approx(100 * (en + zh) / 2, abs=1e-9)
    assert all(r[-2:] == ("irt", "ht") for r in got.values())


@pytest.mark.parametrize("warehouse", ["b", "b_ht"])
def test_estimate_covers_the_full_total(world, warehouse):
    b = world[warehouse]
    got = estimates(b)
    assert set(got) == {"en", "zh", "bilingual"}
    assert query(b, "select count(distinct model_id) from marts.fct_subset_estimates") == [(1,)]
    assert got["bilingual"][0] == 120 and got["en"][0] == 60
    estimator = {"b": "greg", "b_ht": "ht"}[warehouse]
    assert all(r[-2:] == ("irt", estimator) for r in got.values())
    # the truth: the generator's leaderboard total once it drew every prompt
    truth = dict(
        query(
            world["full"],
            "select language_scope, hcq_total from marts.fct_hcq_leaderboard "
            f"where model_id = '{NEW}'",
        )
    )
    for scope, (_, total, lo, hi, rank, rank_lo, rank_hi, _, _) in got.items():
        assert lo <= truth[scope] <= hi, (scope, lo, truth[scope], hi)
        refs = [
            v
            for (v,) in query(
                b,
                "select hcq_total from marts.fct_hcq_leaderboard "
                f"where language_scope = '{scope}' and model_id <> '{NEW}'",
            )
        ]
        assert rank == 1 + sum(v > total for v in refs)
        assert rank_lo == 1 + sum(v > hi for v in refs) and rank_hi == 1 + sum(v > lo for v in refs)


def test_validation_mart_on_the_fully_evaluated_generators(world):
    rows = query(
        world["full"],
        "select strategy, budget_frac, mae_points, coverage_frac, spearman, kendall, n_cases, "
        "estimator, language_scope from marts.agg_subset_validation order by strategy, budget_frac",
    )
    plans = ("random", "stratified", "irt")
    strategies = (*plans, *(f"{p}-ht" for p in plans))
    assert {(r[0], r[1]) for r in rows} == {
        (s, b) for s in strategies for b in (0.02, 0.05, 0.10, 0.20)
    }
    assert all(r[6] == 6 * 2 for r in rows)  # six held-out generators x two seeds (the default)
    assert all(r[7] == ("ht" if r[0].endswith("-ht") else "greg") for r in rows)
    assert {r[8] for r in rows} == {"bilingual"}
    for strategy in strategies:
        mae = {r[1]: r[2] for r in rows if r[0] == strategy}
        assert mae[0.20] < mae[0.02]  # ten times the concepts: a smaller error
    # B has one partially evaluated generator: it stays out of the validation
    assert all(
        r[0] == 5 * 2 for r in query(world["b"], "select n_cases from marts.agg_subset_validation")
    )
    assert query(world["full"], "select count(*) from marts.fct_subset_estimates") == [(0,)]


def adaptive(warehouse: Path, width: int, out: Path):
    return run_main(
        ["plan", "--strategy", "adaptive", "--model", NEW, "--budget", "0.1", "--seed", "3",
         "--target-rank-width", str(width), "--out", str(out)],
        warehouse,
    )  # fmt: skip


def test_adaptive_stops_and_reports_its_spend(world, tmp_path):
    b = world["b"]
    (spent,) = query(b, f"select sum(latency_s * gpus) from raw.images where model_id = '{NEW}'")[0]
    ((lo, hi),) = query(
        b,
        "select rank_lo, rank_hi from marts.fct_subset_estimates "
        f"where model_id = '{NEW}' and language_scope = 'bilingual'",
    )
    # the mart's rank interval is as wide as the target: stop, reporting the spend, write nothing
    stop = adaptive(b, hi - lo, tmp_path / "r2")
    assert stop.returncode == 0, stop.stderr
    assert stop.stdout.startswith("stop:") and f"{spent:,.0f} GPU-s spent" in stop.stdout
    assert f"rank interval width {hi - lo} <= {hi - lo}" in stop.stdout
    assert not (tmp_path / "r2").exists()
    # one rank narrower than it is: the next round extends the irt plan of the same seed by
    # 30 concepts (10% of 300), none drawn before
    more = adaptive(b, hi - lo - 1, tmp_path / "r3")
    assert more.returncode == 0, more.stderr
    nxt = json.loads((tmp_path / "r3" / "plan.json").read_text())
    assert nxt["n_concepts"] == 30 and len(nxt["concepts"]) == 90
    assert set(world["plan"]["concepts"]) <= set(nxt["concepts"])
    new_concepts = {
        json.loads(x)["concept_id"]
        for x in (tmp_path / "r3" / "prompts.jsonl").read_text().splitlines()
    }
    assert len(new_concepts) == 30 and not new_concepts & set(world["plan"]["concepts"])
    assert "warning" not in more.stdout and f"{spent:,.0f} GPU-s spent" in more.stdout
    # the new generator's first round: nothing of it in the warehouse yet
    first = adaptive(world["a"], 0, tmp_path / "r1")
    assert first.returncode == 0, first.stderr
    assert json.loads((tmp_path / "r1" / "plan.json").read_text())["n_concepts"] == 30


def test_marts_have_exactly_the_contract_columns(world):
    """CONTRACTS.md "Additions" names these columns, in this order (a public interface), plus
    the estimator (both marts) and the validation's language scope, added after them."""
    estimates = [r[0] for r in query(world["b"], "describe marts.fct_subset_estimates")]
    assert estimates == [
        "model_id", "language_scope", "n_prompts", "hcq_total", "ci_lo", "ci_hi",
        "rank", "rank_lo", "rank_hi", "strategy", "estimator",
    ]  # fmt: skip
    validation = [r[0] for r in query(world["b"], "describe marts.agg_subset_validation")]
    assert validation == [
        "strategy", "budget_frac", "mae_points", "coverage_frac", "spearman", "kendall", "n_cases",
        "estimator", "language_scope",
    ]  # fmt: skip
