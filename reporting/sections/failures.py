"""Where each generator fails (issue 24): per generator, the capabilities furthest below the field
with their bootstrap intervals (fct_capability_deficits), and failed questions as examples
(fct_failure_examples). Evidence text (prompts, questions, paths) is data: the page escapes it,
and an image path is shown as text, never embedded or linked."""

from __future__ import annotations

from reporting.charts import Interval, IntervalLane, Series, TextColumn, row_chart
from reporting.page import Chart, Section, Table
from reporting.reader import Reader
from reporting.sections.common import points, signed

SCOPE = "pooled"  # both languages' evidence: the scope with the most questions per capability
WORST = 3  # capabilities shown per generator
DEFICIT_COLOR = "#c0504d"


def failures_section(reader: Reader) -> Section:
    worst = worst_capabilities(reader)
    return Section(
        anchor="failures",
        title="Where each generator fails",
        intro="Each generator's capabilities furthest below the field (the other generators' "
        "mean score), with 95% concept-bootstrap intervals, and failed questions as examples: "
        "questions whose prerequisites held and that the official judge answered no.",
        items=[deficit_chart(reader, worst), examples_table(reader, worst)],
    )


def worst_capabilities(reader: Reader) -> list[dict]:
    """Per generator (report order), up to WORST capabilities below the field, furthest first."""
    rows = reader.rows(
        "select d.model_id, d.capability, c.capability_name, d.score, d.field_mean, d.deficit, "
        "d.deficit_ci_lo, d.deficit_ci_hi, d.is_below_field, d.deficit_rank "
        "from marts.fct_capability_deficits d join seeds.capabilities c using (capability) "
        "where d.language_scope = ? and d.deficit < 0 and d.deficit_rank <= ? "
        "order by d.model_id, d.deficit_rank",
        [SCOPE, WORST],
    )
    order = {model: i for i, model in enumerate(reader.models)}
    return sorted(rows, key=lambda r: (order.get(r["model_id"], len(order)), r["deficit_rank"]))


def deficit_chart(reader: Reader, worst: list[dict]) -> Chart:
    labels = [f"{reader.name(r['model_id'])} · {r['capability_name']}" for r in worst]
    columns = [
        TextColumn("score", [points(r["score"], 1) for r in worst]),
        TextColumn("field", [points(r["field_mean"], 1) for r in worst]),
        TextColumn("deficit", [signed(r["deficit"], 1) for r in worst]),
    ]
    deficit = Series("deficit", "", DEFICIT_COLOR)
    values = [
        {"deficit": Interval(r["deficit"], r["deficit_ci_lo"], r["deficit_ci_hi"])} for r in worst
    ]
    lane = IntervalLane("deficit, points (95% interval)", [deficit], values, reference=0.0)
    separators = [
        i for i in range(1, len(worst)) if worst[i]["model_id"] != worst[i - 1]["model_id"]
    ]
    svg = row_chart("Capability deficits", labels, columns, [lane], separators) if worst else None
    return Chart(
        chart_id="capability-deficits",
        title=f"Capabilities furthest below the field ({SCOPE}, points)",
        how_to_read=f"Per generator, up to {WORST} capabilities on which it scores below the "
        "other generators' mean (field). The dot is the deficit (score - field) and the bar its "
        "95% interval over 2,000 paired concept-bootstrap draws: a bar wholly left of the "
        "dashed zero line is a shortfall the evidence supports; one crossing it may be noise.",
        svg=svg,
        empty=f"No generator scores below the field in scope {SCOPE} (one generator, or no "
        "capability with a score for two) in marts.fct_capability_deficits.",
    )


def examples_table(reader: Reader, worst: list[dict]) -> Table:
    shown = {(r["model_id"], r["capability"]) for r in worst}
    names = {r["capability"]: r["capability_name"] for r in worst}
    examples = [
        e
        for e in reader.rows(
            "select model_id, capability, example_rank, prompt_id, prompt_text, question_text, "
            "judge_answers, image_path from marts.fct_failure_examples order by all"
        )
        if (e["model_id"], e["capability"]) in shown
    ]
    place = {(r["model_id"], r["capability"]): i for i, r in enumerate(worst)}
    examples.sort(key=lambda e: (place[e["model_id"], e["capability"]], e["example_rank"]))
    rows = [
        [
            reader.name(e["model_id"]),
            names[e["capability"]],
            e["prompt_id"],
            e["prompt_text"] or "–",
            e["question_text"] or "–",
            e["judge_answers"] or "–",
            e["image_path"] or "–",
        ]
        for e in examples
    ]
    return Table(
        table_id="failure-examples",
        title="Failed questions of those capabilities",
        headers=["generator", "capability", "prompt", "prompt text", "question", "judges", "image"],
        rows=rows,
        how_to_read="For each capability in the chart, failed questions whose prerequisites "
        "held, those most judges answered no first. 'judges' lists every judge's answer "
        "(official one included); 'image' is the image's path in its bundle, when there are "
        "images.",
        text_columns=7,
        empty="No failed question of a capability below the field in marts.fct_failure_examples.",
    )
