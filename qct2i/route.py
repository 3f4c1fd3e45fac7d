"""`qct2i route` I/O: read the live router profiles from the warehouse and print a ranking; for
`--prompt`, turn the plain prompt into questions first with the configured question writer.

The ranking itself is `method.routing.route_requests`, which needs neither DuckDB nor dbt.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from method.routing import RouteResult


def load_live_profiles(warehouse: Path) -> tuple[list[dict], float | None]:
    """The full-data capability profiles (`marts.fct_router_profiles`) and the live epsilon
    (`marts.agg_router_frontier`), read-only: the only warehouse reads routing a request needs."""
    with duckdb.connect(str(warehouse), read_only=True) as con:
        cursor = con.execute(
            "select model_id, language_scope, capability, capability_group, group_order, "
            "capability_order, score_frac, cost_gpu_s_per_mp from marts.fct_router_profiles"
        )
        names = [d[0] for d in cursor.description]
        profiles = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        live = con.execute(
            "select max(eps) from marts.agg_router_frontier where is_live_eps"
        ).fetchone()
    return profiles, (None if live is None else live[0])


def format_route(result: RouteResult) -> str:
    """The ranking as a table: one block per request, Q and C choices marked."""
    blocks = []
    rows = result.rankings
    prompts = list(dict.fromkeys(r.prompt_id for r in rows))
    for prompt in prompts:
        lines = [
            f"request {prompt} (profile {result.language_scope}, eps {result.eps:.3f}; "
            "Q = best predicted, C = cheapest within eps)"
        ]
        lines.append(f"{'rank':>4}  {'generator':<20} {'predicted':>9} {'GPU-s/MP':>9}  choice")
        for r in (r for r in rows if r.prompt_id == prompt):
            quality = "-" if r.predicted_quality is None else f"{r.predicted_quality:.2f}"
            marks = "".join(mark for mark, on in (("Q", r.is_q_choice), ("C", r.is_c_choice)) if on)
            lines.append(
                f"{r.rank:>4}  {r.model_id:<20} {quality:>9} {r.cost_gpu_s_per_mp:>9.2f}  {marks}"
            )
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


class PromptRejected(ValueError):
    """The question writer's output for a prompt broke METHOD 13's rules (every reason listed)."""


def questions_for_prompt(text: str, language: str, writer=None):
    """The questions of one plain prompt (METHOD 13) as a validated questions table, written by
    `writer` (default: the environment's question-writer resource: the tiny LM on the cpu
    profile, the configured LLM on gpu). A rejected output raises PromptRejected with every
    reason and the writer's raw output."""
    import json
    import tempfile

    from dagster_defs.ml_resources import ml_resources_from_env
    from ingestion.backends.api.interfaces import QuestionWriteRequest
    from ingestion.backends.api.question_contract import construct_questions
    from ingestion.bundle import default_capabilities, read_questions_file

    capabilities = default_capabilities()
    if writer is None:
        writer = ml_resources_from_env()["question_writer"].load(sorted(capabilities))
    request = QuestionWriteRequest("request", language, text)
    result = construct_questions(request, writer.write(request), capabilities)
    if not result.accepted:
        reasons = "\n".join(f"  {reason}" for reason in result.reasons)
        raise PromptRejected(
            f"the question writer's output for the prompt was rejected:\n{reasons}\n"
            f"  (its output: {result.raw_text[:300]!r})"
        )
    with tempfile.TemporaryDirectory(prefix="qct2i-route-") as tmp:
        path = Path(tmp) / "questions.jsonl"
        rows = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in result.questions)
        path.write_text(rows, encoding="utf-8")
        return read_questions_file(path, capabilities)
