"""Reliability (METHOD 5, 6): the masking effect and Eq. 9's aggregation robustness, as small
tables (the rank intervals of METHOD 11 are drawn with the leaderboard)."""

from __future__ import annotations

from reporting.page import Section, Table
from reporting.reader import Reader, ordered
from reporting.sections.common import count, percent, points

SCALE_NAMES = {"full": "full evidence", "1000": "1,000 concepts"}


def reliability_section(reader: Reader) -> Section:
    return Section(
        anchor="reliability",
        title="Masking and aggregation robustness",
        intro="Whether the ranking depends on two choices of the method: masking questions whose "
        "prerequisite failed (METHOD 6) and weighting questions before prompts (Eq. 9, METHOD 5).",
        items=[
            masking_table(reader),
            robustness_totals_table(reader),
            robustness_capabilities_table(reader),
        ],
    )


def masking_table(reader: Reader) -> Table:
    rows = reader.rows(
        "select model_id, language_scope, hcq_masked, hcq_unmasked, rank_masked, rank_unmasked, "
        "spearman_rho, n_missing_judgments from marts.fct_masking_effect"
    )
    scopes = ordered([r["language_scope"] for r in rows], ("en", "zh", "bilingual", "pooled"))
    by_key = {(r["model_id"], r["language_scope"]): r for r in rows}
    headers = ["generator"]
    for scope in scopes:
        headers += [f"{scope} masked", f"{scope} unmasked", f"{scope} rank", f"{scope} missing"]
    body = []
    for model in reader.models:
        cells = [reader.name(model)]
        for scope in scopes:
            r = by_key.get((model, scope))
            cells += _masking_cells(r) if r else ["–", "–", "–", "–"]
        if len(cells) > 1:
            body.append(cells)
    rho = {r["language_scope"]: r["spearman_rho"] for r in rows}
    rhos = ", ".join(f"{s} {points(rho[s], 3)}" for s in scopes)
    return Table(
        table_id="masking-effect",
        title=f"Masking effect (Spearman ρ between the two rankings: {rhos or '–'})",
        headers=headers,
        rows=body if scopes else [],
        how_to_read="HCQ with masking (the method: a question counts only when every "
        "prerequisite was answered yes) and without it (every answered question counts), in "
        "points, and the rank under each (masked → unmasked). ρ = 1 means masking changes no "
        "generator's place. Missing: the generator's judgments that are missing (no usable "
        "answer, or no image): missing evidence, left out of both totals, never counted as a "
        "no.",
        empty="No rows in marts.fct_masking_effect.",
    )


def _masking_cells(r: dict) -> list[str]:
    rank = f"{r['rank_masked']} → {r['rank_unmasked']}"
    return [
        points(r["hcq_masked"]),
        points(r["hcq_unmasked"]),
        rank,
        count(r["n_missing_judgments"]),
    ]


def robustness_totals_table(reader: Reader) -> Table:
    rows = reader.rows(
        "select language, scale, n_prompts, variance_ratio, variance_increase_frac, "
        "short_error_question_points, short_error_prompt_points, short_error_increase_frac "
        "from marts.fct_aggregation_robustness where capability = '__total__' "
        "order by language, scale = '1000', scale"
    )
    body = [
        [
            r["language"],
            SCALE_NAMES.get(r["scale"], r["scale"]),
            count(r["n_prompts"]),
            points(r["variance_ratio"], 3),
            percent(r["variance_increase_frac"]),
            points(r["short_error_question_points"], 4),
            points(r["short_error_prompt_points"], 4),
            percent(r["short_error_increase_frac"]),
        ]
        for r in rows
    ]
    return Table(
        table_id="aggregation-robustness",
        title="Eq. 9: question-first against prompt-first weighting (HCQ total)",
        headers=[
            "language",
            "scale",
            "prompts",
            "Vp / Vq",
            "variance increase",
            "short-prompt error, question-first",
            "prompt-first",
            "increase",
        ],
        rows=body,
        text_columns=2,
        how_to_read="Vp / Vq is the variance of the HCQ total under prompt-first weighting "
        "relative to the method's question-first weighting (unit error per question): above 1, "
        "prompt-first is noisier. The short-prompt error is how far one flipped judgment in a "
        "prompt of at most 3 questions moves the total (points), under each weighting.",
        empty="No total rows in marts.fct_aggregation_robustness.",
    )


def robustness_capabilities_table(reader: Reader) -> Table:
    rows = reader.rows(
        "select r.language, r.capability, c.capability_name, r.variance_ratio "
        "from marts.fct_aggregation_robustness r join seeds.capabilities c using (capability) "
        "where r.scale = 'full' order by c.group_order, c.capability_order, r.language"
    )
    languages = ordered([r["language"] for r in rows], ("en", "zh"))
    ratios = {(r["capability"], r["language"]): r["variance_ratio"] for r in rows}
    names = dict.fromkeys((r["capability"], r["capability_name"]) for r in rows)
    body = [
        [name, *(points(ratios.get((capability, lang)), 3) for lang in languages)]
        for capability, name in names
    ]
    return Table(
        table_id="aggregation-robustness-capabilities",
        title="Eq. 9 per capability, full evidence: Vp / Vq",
        headers=["capability", *languages],
        rows=body,
        how_to_read="ratio_t = mean over prompts of n × mean over prompts of 1/n, where n is "
        "a prompt's count of valid questions of the capability: 1 when every prompt carries "
        "the same number, larger the more unequal the prompts are.",
        empty="No capability rows in marts.fct_aggregation_robustness.",
    )
