"""Scoring (METHOD 3, 4, 11): the leaderboard per scope with rank intervals and top-1
probabilities, and the capability heatmap per scope."""

from __future__ import annotations

import math

from reporting.charts import (
    BarLane,
    ColorKey,
    Heatmap,
    Interval,
    IntervalLane,
    Series,
    TextColumn,
    heatmap,
    row_chart,
)
from reporting.leaderboard import group_columns
from reporting.page import Chart, Section
from reporting.reader import Reader
from reporting.sections.common import percent, points, spans
from reporting.svg import sequential_color

# fct_rank_reliability covers en, zh and the bilingual mean (METHOD 11); pooled has no intervals
RELIABILITY_SCOPES = ("en", "zh", "bilingual")
RANK_COLOR = "#2b5d8a"


def scoring_section(reader: Reader) -> Section:
    boards = [
        leaderboard_chart(reader, scope)
        for scope in reader.scopes("fct_hcq_leaderboard")
        if scope in RELIABILITY_SCOPES
    ]
    heatmaps = [capability_chart(reader, s) for s in reader.scopes("fct_capability_scores")]
    return Section(
        anchor="scoring",
        title="Leaderboard and capabilities",
        intro="HCQ totals (Eq. 4) per language scope with their bootstrap rank intervals "
        "(METHOD 11), and each generator's score on every capability of the taxonomy (Eq. 2; "
        "Eq. 3 for text).",
        items=[*boards, *heatmaps],
    )


def leaderboard_rows(reader: Reader, scope: str) -> list[dict]:
    """The scope's leaderboard in rank order, with the rank interval and top-1 probability."""
    groups = ", ".join(f'l."{key}"' for key, _ in group_columns(reader.con))
    return reader.rows(
        f"select l.model_id, l.rank, l.hcq_total, {groups}, r.top1_prob, r.rank_lo, r.rank_hi "
        "from marts.fct_hcq_leaderboard l left join marts.fct_rank_reliability r "
        "using (model_id, language_scope) where l.language_scope = ? "
        "order by l.rank nulls last, l.model_id",
        [scope],
    )


def leaderboard_chart(reader: Reader, scope: str) -> Chart:
    rows = leaderboard_rows(reader, scope)
    groups = group_columns(reader.con)
    labels = [f"{r['rank'] or '–'}. {reader.name(r['model_id'])}" for r in rows]
    columns = [
        TextColumn("HCQ", [points(r["hcq_total"]) for r in rows]),
        *(TextColumn(key, [points(r[key], 1) for r in rows]) for key, _ in groups),
    ]
    rank = Series("rank", "", RANK_COLOR)
    ranks = [
        {"rank": Interval(r["rank"], r["rank_lo"], r["rank_hi"])} if r["rank"] is not None else {}
        for r in rows
    ]
    lanes = [
        IntervalLane(
            "95% rank interval",
            [rank],
            ranks,
            domain=(0.5, len(rows) + 0.5),
            integer_ticks=True,
            width=240,
        ),
        BarLane("top-1 probability", [r["top1_prob"] for r in rows], label=percent),
    ]
    svg = row_chart(f"HCQ leaderboard, {scope}", labels, columns, lanes) if rows else None
    return Chart(
        chart_id=f"leaderboard-{scope}",
        title=f"Leaderboard: {scope} (HCQ, points)",
        how_to_read="Generators in rank order; HCQ is the total and the next columns the "
        "group views (points, 0-100). The dot is the observed rank and the bar across it the "
        "95% interval of the rank over 2,000 concept-bootstrap draws: generators whose bars "
        "overlap are not reliably ordered. Top-1 probability is the share of draws in which "
        "the generator ranks first.",
        svg=svg,
        empty=f"No rows for scope {scope} in marts.fct_hcq_leaderboard.",
    )


def capability_chart(reader: Reader, scope: str) -> Chart:
    capabilities = reader.rows(
        "select capability, capability_name, group_name from seeds.capabilities "
        "order by group_order, capability_order"
    )
    scores = {
        (r["model_id"], r["capability"]): r
        for r in reader.rows(
            "select model_id, capability, score, n_valid, score_source "
            "from marts.fct_capability_scores where language_scope = ?",
            [scope],
        )
    }
    models = [m for m in reader.models if any((m, c["capability"]) in scores for c in capabilities)]
    values = [[_score(scores, m, c["capability"]) for c in capabilities] for m in models]
    lo = _color_floor(reader)

    def tip(i: int, j: int, value: float | None) -> str:
        cell = scores.get((models[i], capabilities[j]["capability"]), {})
        figure = "no evidence" if value is None else f"{value:.2f} points"
        return (
            f"{reader.name(models[i])} · {capabilities[j]['capability_name']} ({scope}): "
            f"{figure}, {cell.get('n_valid') or 0} valid, from {cell.get('score_source') or '–'}"
        )

    spec = Heatmap(
        label=f"Capability scores, {scope}",
        row_labels=[reader.name(m) for m in models],
        col_labels=[c["capability_name"] for c in capabilities],
        values=values,
        color_key=ColorKey(
            lambda v: sequential_color(v, lo, 100.0), lo, 100.0, "points", below=True
        ),
        cell_text=lambda v: f"{v:.0f}",
        tip=tip,
        col_groups=spans([c["group_name"] for c in capabilities]),
    )
    return Chart(
        chart_id=f"capabilities-{scope}",
        title=f"Capability scores: {scope} (points)",
        how_to_read="One row per generator (in bilingual rank order), one column per capability "
        "under its reporting group; darker is better, grey is no evidence. The colour scale is "
        f"the same in every scope, so the heatmaps compare across languages; scores of {lo:g} "
        "and below share the lightest colour.",
        svg=heatmap(spec) if models else None,
        empty=f"No rows for scope {scope} in marts.fct_capability_scores.",
    )


def _score(scores: dict, model_id: str, capability: str) -> float | None:
    row = scores.get((model_id, capability))
    return None if row is None else row["score"]


def _color_floor(reader: Reader) -> float:
    """The colour scale's low end, shared by every scope: the 10th percentile of all scores, down
    to a multiple of 5. Lower scores take the lightest colour (their figure is printed), so a
    few very weak cells do not wash out the differences among the rest."""
    low = reader.rows("select quantile_cont(score, 0.1) as lo from marts.fct_capability_scores")[0][
        "lo"
    ]
    return 0.0 if low is None else float(min(95, 5 * math.floor(low / 5)))
