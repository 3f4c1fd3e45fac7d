"""Structure (METHOD 7-10): Figure 2 (exact completion by tag count; root controls), Figure 3
(coupling Delta per context and Gamma per contrast) and Figure 4 (composition fingerprints), one
chart per evidence language."""

from __future__ import annotations

import math

from reporting.charts import (
    ColorKey,
    Heatmap,
    Interval,
    IntervalLane,
    LineChart,
    Series,
    TextColumn,
    heatmap,
    line_chart,
    row_chart,
)
from reporting.page import Chart, Section
from reporting.reader import Reader
from reporting.sections.common import count, points, signed, spans
from reporting.svg import diverging_color

MACRO = "__macro__"  # the mean over models in the coupling marts
CONTEXTS = (
    Series("edge", "edge (parent, child)", "#e15759", "circle"),
    Series("nonanc", "same component, unrelated", "#f28e2b", "diamond"),
    Series("disc", "different components", "#4e79a7", "square"),
)
CONTRASTS = (
    Series("edge_vs_disc", "edge − disc", "#e15759", "circle"),
    Series("nonanc_vs_disc", "nonanc − disc", "#f28e2b", "diamond"),
)
DIFF_COLOR = "#2b5d8a"


def structure_section(reader: Reader) -> Section:
    languages = reader.languages()
    items = [
        *(exactness_chart(reader, lang) for lang in languages),
        *(root_controls_chart(reader, lang) for lang in languages),
        *(coupling_chart(reader, lang) for lang in languages),
        *(contrast_chart(reader, lang) for lang in languages),
        *(fingerprint_chart(reader, lang) for lang in languages),
    ]
    return Section(
        anchor="structure",
        title="Compositional structure",
        intro="How generators fare on the scene graphs of the prompts: whole components right "
        "(Eq. 5), roots against their cross-prompt baselines (Eq. 6), dependence between "
        "questions beyond their marginals (Eq. 7-8) and the hardest tag combinations (METHOD 10).",
        items=items,
    )


def exactness_chart(reader: Reader, language: str) -> Chart:
    rows = reader.rows(
        "select model_id, n_tags_bucket, bucket_order, exact_completion "
        "from marts.agg_exactness_by_tag_count where language = ? order by bucket_order",
        [language],
    )
    buckets = list(dict.fromkeys(r["n_tags_bucket"] for r in rows))
    value = {(r["model_id"], r["n_tags_bucket"]): r["exact_completion"] for r in rows}
    models = [m for m in reader.models if any((m, b) in value for b in buckets)]
    series = [
        (Series(m, reader.name(m), reader.color(m)), [value.get((m, b)) for b in buckets])
        for m in models
    ]
    spec = LineChart(
        label=f"Exact completion by tag count, {language}",
        categories=buckets,
        series=series,
        x_title="distinct tags in the component",
        y_title="exact completion (points)",
        domain=(0.0, 100.0),
    )
    return Chart(
        chart_id=f"exactness-by-tags-{language}",
        title=f"Figure 2 (left): exact completion by tag count, {language}",
        how_to_read="Share of scene-graph components a generator gets entirely right (every "
        "question valid and yes, Eq. 5), averaged within each prompt and then over prompts, "
        "by how many distinct capability tags the component mixes; one line per generator. A "
        "steeper fall means composition costs that generator more.",
        svg=line_chart(spec) if rows else None,
        empty=f"No rows for {language} in marts.agg_exactness_by_tag_count.",
    )


def root_controls_chart(reader: Reader, language: str) -> Chart:
    rows = {
        r["model_id"]: r
        for r in reader.rows(
            "select model_id, n_contexts, local_survival, baseline_survival, diff, ci_lo, ci_hi "
            "from marts.fct_root_controls where language = ?",
            [language],
        )
    }
    models = [m for m in reader.models if m in rows]
    columns = [
        TextColumn("contexts", [count(rows[m]["n_contexts"]) for m in models]),
        TextColumn("local", [points(rows[m]["local_survival"], 1) for m in models]),
        TextColumn("baseline", [points(rows[m]["baseline_survival"], 1) for m in models]),
    ]
    diff = Series("diff", "", DIFF_COLOR)
    values = [{"diff": _interval(rows[m], "diff")} for m in models]
    lane = IntervalLane("local − baseline", [diff], values, unit="points", reference=0.0)
    labels = [reader.name(m) for m in models]
    svg = row_chart(f"Root controls, {language}", labels, columns, [lane]) if models else None
    return Chart(
        chart_id=f"root-controls-{language}",
        title=f"Figure 2 (right): root survival against its cross-prompt baseline, {language}",
        how_to_read="Local: how often a root entity survives in prompts where it carries "
        "dependants; baseline: the same entity's survival in the other prompts of the language "
        "(Eq. 6), both in points. The dot is their difference with its 95% prompt-bootstrap "
        "interval; an interval across the dashed zero line shows no effect of the dependants.",
        svg=svg,
        empty=f"No rows for {language} in marts.fct_root_controls (no eligible root contexts).",
    )


def coupling_chart(reader: Reader, language: str) -> Chart:
    return _coupling_forest(
        reader,
        language,
        mart="fct_coupling",
        key="context",
        estimate="delta",
        series=CONTEXTS,
        chart_id=f"coupling-delta-{language}",
        title=f"Figure 3: coupling Delta per pair context, {language}",
        how_to_read="Delta (Eq. 7) is how much more often two questions of one prompt both "
        "succeed than their success rates elsewhere predict, in points, for pairs joined by a "
        "scene-graph edge, pairs in one component without an ancestor link, and pairs in "
        "different components; bars are 95% prompt-bootstrap intervals. Above zero: successes "
        "come together.",
    )


def contrast_chart(reader: Reader, language: str) -> Chart:
    return _coupling_forest(
        reader,
        language,
        mart="fct_coupling_contrast",
        key="contrast",
        estimate="gamma",
        series=CONTRASTS,
        chart_id=f"coupling-gamma-{language}",
        title=f"Figure 3: coupling contrast Gamma, {language}",
        how_to_read="Gamma (Eq. 8) compares Delta in a context with Delta between different "
        "components of the same prompts, matched stratum by stratum, in points, with 95% "
        "intervals: above zero, questions that share a component are coupled beyond what "
        "sharing a prompt explains. The last row is the mean over generators.",
    )


def _coupling_forest(
    reader: Reader,
    language: str,
    *,
    mart: str,
    key: str,
    estimate: str,
    series: tuple[Series, ...],
    chart_id: str,
    title: str,
    how_to_read: str,
) -> Chart:
    """A forest plot of one coupling mart: per generator (then the macro mean) one interval per
    context or contrast."""
    rows = reader.rows(
        f"select model_id, {key}, {estimate}, ci_lo, ci_hi from marts.{mart} where language = ?",
        [language],
    )
    labels, values, separators = _by_model_with_macro(reader, rows, key, estimate)
    name = estimate.capitalize()
    lane = IntervalLane(name, series, values, unit="points", reference=0.0, width=340)
    title_svg = f"Coupling {name}, {language}"
    svg = row_chart(title_svg, labels, (), [lane], separators) if rows else None
    return Chart(
        chart_id=chart_id,
        title=title,
        how_to_read=how_to_read,
        svg=svg,
        empty=f"No rows for {language} in marts.{mart}.",
    )


def _by_model_with_macro(
    reader: Reader, rows: list[dict], key: str, estimate: str
) -> tuple[list[str], list[dict[str, Interval]], list[int]]:
    """Rows per generator in the shared order, then the macro mean below a rule."""
    by_model: dict[str, dict[str, Interval]] = {}
    for r in rows:
        by_model.setdefault(r["model_id"], {})[r[key]] = _interval(r, estimate)
    models = [m for m in reader.models if m in by_model]
    models += sorted(m for m in by_model if m not in models and m != MACRO)
    labels = [reader.name(m) for m in models]
    values = [by_model[m] for m in models]
    separators = []
    if MACRO in by_model:
        separators.append(len(models))
        labels.append("mean over generators")
        values.append(by_model[MACRO])
    return labels, values, separators


def _interval(row: dict, estimate: str) -> Interval:
    return Interval(row[estimate], row["ci_lo"], row["ci_hi"])


def fingerprint_chart(reader: Reader, language: str) -> Chart:
    rows = reader.rows(
        "select model_id, n_tags, tag_set, frequency, frequency_rank, descendant_completion, "
        "deviation, n_components from marts.fct_composition_fingerprints where language = ? "
        "order by n_tags, frequency_rank, tag_set",
        [language],
    )
    tag_sets = list(dict.fromkeys((r["n_tags"], r["tag_set"]) for r in rows))
    cells = {(r["n_tags"], r["tag_set"], r["model_id"]): r for r in rows}
    models = [m for m in reader.models if any(r["model_id"] == m for r in rows)]
    values = [[_deviation(cells.get((n, tags, m))) for m in models] for n, tags in tag_sets]
    limit = _deviation_limit(reader)

    def tip(i: int, j: int, value: float | None) -> str:
        n, tags = tag_sets[i]
        cell = cells.get((n, tags, models[j]))
        if cell is None or value is None:
            return f"{reader.name(models[j])} · {tags}: no surviving component"
        return (
            f"{reader.name(models[j])} · {tags}: descendant completion "
            f"{cell['descendant_completion']:.1f}%, {value:+.1f} points from the generator's "
            f"mean at {n} tags ({cell['n_components']} components)"
        )

    spec = Heatmap(
        label=f"Composition fingerprints, {language}",
        row_labels=[tags.replace("+", " + ") for _, tags in tag_sets],
        col_labels=[reader.name(m) for m in models],
        values=values,
        color_key=ColorKey(
            lambda v: diverging_color(v, limit), -limit, limit, "points from the mean"
        ),
        cell_text=lambda v: signed(v, 0),
        tip=tip,
        row_groups=[(f"{n} tags", k) for n, k in spans([n for n, _ in tag_sets])],
    )
    return Chart(
        chart_id=f"fingerprints-{language}",
        title=f"Figure 4: composition fingerprints, {language}",
        how_to_read="Rows: the three most frequent tag sets of each size (2 to 5 tags); "
        "columns: generators. A cell is the generator's descendant completion on components with "
        "that tag set (roots survived) minus its own mean at that size, in points: red is a "
        "combination the generator finds harder than usual, blue easier.",
        svg=heatmap(spec) if rows else None,
        empty=f"No rows for {language} in marts.fct_composition_fingerprints.",
    )


def _deviation(row: dict | None) -> float | None:
    return None if row is None else row["deviation"]


def _deviation_limit(reader: Reader) -> float:
    """One symmetric colour scale for every language: the largest |deviation|, up to 5 points."""
    largest = reader.rows(
        "select max(abs(deviation)) as m from marts.fct_composition_fingerprints"
    )[0]["m"]
    return 5.0 * math.ceil((largest or 5.0) / 5.0)
