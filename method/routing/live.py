"""Live routing of new requests (`qct2i route`, METHOD 12).

`route_requests` ranks every generator for every prompt of a questions table from the small
`marts.fct_router_profiles` (and the live epsilon from `marts.agg_router_frontier`), with the
same prediction and choice as the out-of-fold evaluation (`method.routing.predict`), so the
command never imports dbt or Dagster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from method.routing.predict import choose, cost_ranks, predict_quality
from method.scores import POINTS
from method.taxonomy import Taxonomy


@dataclass(frozen=True)
class Ranked:
    """One generator for one request: rank by predicted quality, cost, and the router choices."""

    prompt_id: str
    rank: int
    model_id: str
    predicted_quality: float | None  # points
    cost_gpu_s_per_mp: float
    is_q_choice: bool
    is_c_choice: bool


@dataclass(frozen=True)
class RouteResult:
    language_scope: str
    eps: float
    rankings: tuple[Ranked, ...]

    def as_json(self) -> dict:
        prompts: dict[str, list[dict]] = {}
        for row in self.rankings:
            prompts.setdefault(row.prompt_id, []).append(
                {k: v for k, v in row.__dict__.items() if k != "prompt_id"}
            )
        return {
            "language_scope": self.language_scope,
            "eps": self.eps,
            "requests": [{"prompt_id": p, "ranking": r} for p, r in prompts.items()],
        }


def route_requests(
    questions: pa.Table,
    profiles: Sequence[Mapping],
    language: str = "en",
    eps: float | None = None,
    live_eps: float | None = None,
) -> RouteResult:
    """Rank every generator for every prompt of `questions` (a validated questions table).

    `profiles`: rows of `marts.fct_router_profiles`. The profile of `language` is used; a
    language the warehouse has no evidence for falls back to the `pooled` profile. `eps` defaults
    to `live_eps` (the warehouse's selected value), else 0.
    """
    scopes = {row["language_scope"] for row in profiles}
    scope = language if language in scopes else "pooled"
    rows = [row for row in profiles if row["language_scope"] == scope]
    if not rows:
        raise ValueError("the warehouse has no router profiles; run `qct2i build` first")
    taxonomy = Taxonomy.from_rows(
        {
            "capability": r["capability"],
            "group_key": r["capability_group"],
            "group_order": r["group_order"],
            "capability_order": r["capability_order"],
        }
        for r in {r["capability"]: r for r in rows}.values()
    )
    models = tuple(sorted({r["model_id"] for r in rows}))
    cost = np.array(
        [next(r["cost_gpu_s_per_mp"] for r in rows if r["model_id"] == m) for m in models]
    )
    position = {t: i for i, t in enumerate(taxonomy.capabilities)}
    profile = np.full((len(models), len(taxonomy.capabilities)), np.nan)
    for r in rows:
        if r["score_frac"] is not None:
            profile[models.index(r["model_id"]), position[r["capability"]]] = r["score_frac"]
    prompt_ids = list(dict.fromkeys(questions["prompt_id"].to_pylist()))
    active = np.zeros((len(prompt_ids), len(taxonomy.capabilities)), dtype=bool)
    row_of = {p: i for i, p in enumerate(prompt_ids)}
    for prompt, capability in zip(
        questions["prompt_id"].to_pylist(), questions["capability"].to_pylist(), strict=True
    ):
        if capability in position:
            active[row_of[prompt], position[capability]] = True
    predicted = predict_quality(profile, active, taxonomy)
    eps = float(live_eps if eps is None and live_eps is not None else (eps or 0.0))
    ranks = cost_ranks(cost, models)
    q_choice = choose(predicted, ranks, 0.0)
    c_choice = choose(predicted, ranks, eps)
    out = []
    for i, prompt in enumerate(prompt_ids):
        filled = np.where(np.isnan(predicted[i]), -np.inf, predicted[i])
        order = sorted(range(len(models)), key=lambda m, f=filled: (-f[m], ranks[m]))
        for rank, m in enumerate(order, start=1):
            value = predicted[i, m]
            out.append(
                Ranked(
                    prompt_id=prompt,
                    rank=rank,
                    model_id=models[m],
                    predicted_quality=None if np.isnan(value) else round(POINTS * float(value), 4),
                    cost_gpu_s_per_mp=round(float(cost[m]), 4),
                    is_q_choice=bool(m == q_choice[i]),
                    is_c_choice=bool(m == c_choice[i]),
                )
            )
    return RouteResult(scope, eps, tuple(out))
