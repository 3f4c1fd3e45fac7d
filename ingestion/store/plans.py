"""Plan folders (`qct2i plan`, `qct2i evaluate`): choose the prompts a new generator should draw
(METHOD 16) from the published warehouse's evidence, read-only, and write them as bundle tables.
Here, below the Dagster wiring, so the command line and a Dagster job plan with one code.

The plan folder holds `prompts.jsonl` and `questions.jsonl` (the bundle's own tables and columns:
both languages of each chosen concept, every question with its DSG) and `plan.json` (strategy,
budget, seed, each concept's inclusion probability, the GPU-seconds it is expected to cost).
Generate and judge those prompts with the new generator, add its `images` / `judgments` (and
`transcriptions`) to the folder, and it is a bundle `qct2i import --append` takes;
`fct_subset_estimates` then estimates the generator.

`adaptive` is the `irt` plan released in rounds: each call writes the next round of the same
sequential-Poisson order (nested, so the drawn concepts stay a plan of known inclusion
probabilities), or says to stop once the generator's bilingual rank interval in the warehouse is
at most `--target-rank-width` wide, reporting the GPU-seconds its images took.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from ingestion.bundle.format import TABLES, write_bundle
from method.bootstrap import BILINGUAL, point_totals, stats_from_arrow
from method.subsets import (
    Planner,
    Predictor,
    budget_size,
    coverage,
    fully_evaluated,
    greg_estimate,
    make_plan,
    planned_inclusion,
    rank_against,
    restrict_models,
)

PLAN_STRATEGIES = ("random", "stratified", "irt", "adaptive")
COVERAGE = "intermediate.int_prompt_coverage"
STATISTICS = (
    "intermediate.int_prompt_sufficient_stats",
    "seeds.capabilities",
    "intermediate.int_capability_scores",
)


class PlanError(Exception):
    """A plan that cannot be made (a message for the user, no traceback)."""


@dataclass(frozen=True)
class PlanResult:
    out: Path
    strategy: str
    concepts: tuple[str, ...]
    n_prompts: int
    gpu_s_estimate: float | None
    stop: bool = False  # adaptive: the target width is reached, nothing written
    message: str = ""


def _evidence(con: duckdb.DuckDBPyConnection):
    try:
        tables = [con.sql(f"select * from {name}").to_arrow_table() for name in STATISTICS]
        covered_table = con.sql(f"select * from {COVERAGE}").to_arrow_table()
    except duckdb.CatalogException as error:
        raise PlanError(
            f"the warehouse lacks a table a plan reads ({error}); run `qct2i build` first"
        ) from None
    stats = stats_from_arrow(*tables)
    return stats, coverage(covered_table, stats)


def _gpu_s_per_prompt(con: duckdb.DuckDBPyConnection, models: list[str]) -> float | None:
    """Mean GPU-seconds per image (latency x GPUs) of `models`, or None without images."""
    (value,) = con.execute(
        "select avg(latency_s * gpus) from raw.images where list_contains(?, model_id)",
        [models],
    ).fetchone()
    return None if value is None else float(value)


def _gpu_s_spent(con: duckdb.DuckDBPyConnection, model: str) -> float | None:
    """GPU-seconds the model's images took, or None when one of them came without its latency
    or GPU count (drawn elsewhere: the spend is unknown, not the timed images' sum)."""
    value, untimed = con.execute(
        "select coalesce(sum(latency_s * gpus), 0), count(*) - count(latency_s * gpus) "
        "from raw.images where model_id = ?",
        [model],
    ).fetchone()
    return None if untimed else float(value)


def _shown_gpu_s(value: float | None) -> str:
    return "unknown" if value is None else f"{value:,.0f}"


def _write_folder(out: Path, con, concept_ids: list[str], plan_json: dict) -> int:
    """prompts.jsonl, questions.jsonl and plan.json of the chosen concepts, written to a scratch
    folder and moved into place: a failed plan leaves nothing half-written."""
    prompt_cols = ", ".join(TABLES["prompts"].column_names)
    question_cols = ", ".join(f"q.{c}" for c in TABLES["questions"].column_names)
    prompts = con.execute(
        f"select {prompt_cols} from raw.prompts where list_contains(?, concept_id) "
        "order by concept_id, language, prompt_id",
        [concept_ids],
    ).fetchall()
    questions = con.execute(
        f"select {question_cols} from raw.questions as q "
        "inner join raw.prompts as p on q.prompt_id = p.prompt_id "
        "where list_contains(?, p.concept_id) "
        "order by p.concept_id, p.language, q.prompt_id, q.question_order",
        [concept_ids],
    ).fetchall()
    rows = {
        "prompts": [dict(zip(TABLES["prompts"].column_names, r, strict=True)) for r in prompts],
        "questions": [
            dict(zip(TABLES["questions"].column_names, r, strict=True)) for r in questions
        ],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".plan-", dir=out.parent))
    try:
        write_bundle(scratch, rows, "jsonl")
        (scratch / "plan.json").write_text(
            json.dumps(plan_json | {"n_prompts": len(prompts)}, indent=1) + "\n",
            encoding="utf-8",
        )
        scratch.rename(out)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return len(prompts)


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PlanError(f"{out}: exists and is not an empty folder; name a new folder")
    if out.exists():
        out.rmdir()


def make_plan_folder(
    warehouse: Path,
    out: Path,
    budget: float,
    strategy: str = "irt",
    seed: int = 0,
    model: str | None = None,
    target_rank_width: int | None = None,
) -> PlanResult:
    """Write the plan folder `out` (see the module docstring). `adaptive` needs `model` (the new
    generator, whose earlier rounds may already be in the warehouse), `target_rank_width`, and
    uses `budget` as the round size."""
    if strategy not in PLAN_STRATEGIES:
        raise PlanError(f"unknown strategy {strategy!r}; expected one of {PLAN_STRATEGIES}")
    if not 0.0 < budget <= 1.0:
        raise PlanError(f"--budget must be a fraction in (0, 1], not {budget}")
    if strategy == "adaptive" and (model is None or target_rank_width is None):
        raise PlanError("--strategy adaptive needs --model and --target-rank-width")
    out = Path(out)
    _check_out(out)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        stats, covered = _evidence(con)
        full = fully_evaluated(covered)
        references = tuple(int(i) for i in np.flatnonzero(full) if stats.model_ids[i] != model)
        if len(references) < 2:
            raise PlanError(
                f"{warehouse}: a plan needs at least 2 fully evaluated generators, found "
                f"{len(references)}"
            )
        planner = Planner(stats, references)
        per_prompt = _gpu_s_per_prompt(con, [stats.model_ids[i] for i in references])
        drawn = np.zeros(len(stats.concept_ids), bool)
        if strategy == "adaptive":
            step = _adaptive_step(
                con, planner, stats, covered, model, budget, seed, target_rank_width
            )
            if step.stop or step.chosen is None:
                return PlanResult(out, strategy, (), 0, None, stop=True, message=step.message)
            chosen, inclusion, message = step.chosen, step.inclusion, step.message
            drawn = step.drawn
        else:
            plan = make_plan(strategy, budget, seed, planner)
            chosen, inclusion, message = plan.chosen, plan.inclusion, ""
        concept_ids = [stats.concept_ids[i] for i in chosen if not drawn[i]]
        plan_json = {
            "strategy": strategy,
            "budget_frac": budget,
            "seed": seed,
            "references": [stats.model_ids[i] for i in references],
            "n_concepts": len(concept_ids),
            "concepts": {stats.concept_ids[i]: float(inclusion[i]) for i in chosen},
            "gpu_s_per_prompt_estimate": per_prompt,
        }
        n_prompts = _write_folder(out, con, concept_ids, plan_json)
    estimate = None if per_prompt is None else per_prompt * n_prompts
    return PlanResult(out, strategy, tuple(concept_ids), n_prompts, estimate, message=message)


def write_every_prompt(warehouse: Path, out: Path) -> int:
    """The plan folder of a full evaluation: every prompt and question of the published
    warehouse (strategy `full`, every concept's inclusion probability 1); returns the prompts."""
    out = Path(out)
    _check_out(out)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute("select distinct concept_id from raw.prompts").fetchall()
        concept_ids = [c for (c,) in rows]
        plan_json = {
            "strategy": "full",
            "budget_frac": 1.0,
            "n_concepts": len(concept_ids),
            "concepts": dict.fromkeys(sorted(concept_ids), 1.0),
        }
        return _write_folder(out, con, sorted(concept_ids), plan_json)


@dataclass(frozen=True)
class _Step:
    stop: bool
    message: str
    chosen: np.ndarray | None = None
    inclusion: np.ndarray | None = None
    drawn: np.ndarray | None = None


def _adaptive_step(con, planner, stats, covered, model, round_frac, seed, target) -> _Step:
    """The next round of the nested `irt` order, or stop (with the spend) once the generator's
    bilingual rank interval is at most `target` ranks wide."""
    n_concepts = len(stats.concept_ids)
    m = stats.model_ids.index(model) if model in stats.model_ids else None
    drawn = covered[m].any(axis=1) if m is not None else np.zeros(n_concepts, bool)
    sizes = planner.sizes("irt")
    n_drawn = int(drawn.sum())
    status = ""
    if n_drawn:
        plan = planned_inclusion("irt", planner, np.flatnonzero(drawn))
        predictor = Predictor.from_planner(planner)
        est = greg_estimate(stats.numerator[:, m], stats.denominator[:, m], plan, stats, predictor)
        s = stats.scopes.index(BILINGUAL)
        refs = point_totals(restrict_models(stats, planner.references))[:, s]
        rank, lo, hi = rank_against(est.total[s], est.ci_lo[s], est.ci_hi[s], refs)
        spent = _gpu_s_spent(con, model)
        status = (
            f"{model}: {n_drawn} concepts drawn, {_shown_gpu_s(spent)} GPU-s spent; bilingual HCQ "
            f"{100 * est.total[s]:.2f} [{100 * est.ci_lo[s]:.2f}, {100 * est.ci_hi[s]:.2f}], "
            f"rank {rank} [{lo}, {hi}]"
        )
        if hi - lo <= target:
            return _Step(True, f"stop: {status}; rank interval width {hi - lo} <= {target}")
        if n_drawn == n_concepts:
            return _Step(True, f"stop: {status}; every concept is drawn")
    n_next = min(n_concepts, n_drawn + budget_size(n_concepts, round_frac))
    plan = make_plan("irt", n_next / n_concepts, seed, planner, sizes)
    if drawn[plan.chosen].sum() != n_drawn:
        status += (
            "; warning: the drawn concepts are not an earlier round of this plan (another seed or"
            " strategy?), so their inclusion probabilities are approximate"
        )
    message = f"round of {n_next - n_drawn} concepts (total {n_next})" + (
        f"; {status}" if status else ""
    )
    return _Step(False, message, plan.chosen, plan.inclusion, drawn)


def format_plan(result: PlanResult) -> str:
    if result.stop:
        return result.message
    cost = (
        "unknown (no images in the warehouse)"
        if result.gpu_s_estimate is None
        else f"about {result.gpu_s_estimate:,.0f} GPU-s at the references' mean per image"
    )
    lines = [
        f"wrote {result.out}: {len(result.concepts)} concepts, {result.n_prompts} prompts "
        f"({result.strategy}); expected cost {cost}",
    ]
    if result.message:
        lines.append(result.message)
    return "\n".join(lines)


__all__ = ["PlanError", "PlanResult", "format_plan", "make_plan_folder", "write_every_prompt"]
