"""Where each generator fails (issues 24, 32): per generator, the capabilities furthest below the
field with their bootstrap intervals (fct_capability_deficits), and failed questions as examples
(fct_failure_examples, chosen and ordered by the mart; joined to the deficits here in SQL).
Evidence text (prompts, questions, paths) is data: the page escapes it, and an image path is shown
as text, never embedded or linked."""

from __future__ import annotations

from reporting.charts import Interval, IntervalLane, Series, TextColumn, row_chart
from reporting.page import Chart, Section, Table
from reporting.reader import Reader
from reporting.sections.common import count, points, signed

SCOPE = "pooled"  # both languages' evidence: the scope with the most questions per capability
WORST = 3  # capabilities shown per generator
DEFICIT_COLOR = "#c0504d"

# The chart's rows (params SCOPE, WORST, the report's model order): per generator, up to WORST
# capabilities below the field, furthest first; the examples are joined to the same rows.
SHOWN = "where d.language_scope = ? and d.deficit < 0 and d.deficit_rank <= ?"
IN_REPORT_ORDER = "order by list_position(?::varchar[], d.model_id), d.model_id, d.deficit_rank"


def failures_section(reader: Reader) -> Section:
    worst = worst_capabilities(reader)
    return Section(
        anchor="failures",
        title="Where each generator fails",
        intro="Each generator's capabilities furthest below the field (the other generators' "
        "mean score), with 95% concept-bootstrap intervals, and failed questions as examples: "
        "questions whose prerequisites held and whose official judgment does not comply (the "
        "judge said no, or yes where a compliant image gives no).",
        items=[deficit_chart(reader, worst), examples_table(reader)],
    )


def worst_capabilities(reader: Reader) -> list[dict]:
    return reader.rows(
        "select d.model_id, d.capability, c.capability_name, d.score, d.field_mean, d.deficit, "
        "d.deficit_ci_lo, d.deficit_ci_hi, d.is_below_field, d.deficit_rank, d.n_draws "
        "from marts.fct_capability_deficits d join seeds.capabilities c using (capability) "
        f"{SHOWN} {IN_REPORT_ORDER}",
        [SCOPE, WORST, reader.models],
    )


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
        f"95% interval over {draws(worst)} paired concept-bootstrap draws (those in which the "
        "deficit is defined): a bar wholly left of the dashed zero line is a shortfall the "
        "evidence supports; one crossing it may be noise.",
        svg=svg,
        empty=f"No generator scores below the field in scope {SCOPE} (one generator, or no "
        "capability with a score for two) in marts.fct_capability_deficits.",
    )


def draws(worst: list[dict]) -> str:
    """The shown rows' draw counts (fct_capability_deficits.n_draws): one figure or a range."""
    counts = sorted({r["n_draws"] for r in worst})
    if not counts:
        return "the"
    return count(counts[0]) if len(counts) == 1 else f"{count(counts[0])}–{count(counts[-1])}"


def examples_table(reader: Reader) -> Table:
    examples = reader.rows(
        "select e.model_id, c.capability_name, e.prompt_id, e.prompt_text, e.question_text, "
        "e.compliant_answer, e.judges, e.image_path "
        "from marts.fct_failure_examples e "
        "join marts.fct_capability_deficits d using (model_id, capability) "
        f"join seeds.capabilities c using (capability) {SHOWN} {IN_REPORT_ORDER}, e.example_rank",
        [SCOPE, WORST, reader.models],
    )
    rows = [
        [
            reader.name(e["model_id"]),
            e["capability_name"],
            e["prompt_id"],
            e["prompt_text"] or "–",
            e["question_text"] or "–",
            e["compliant_answer"],
            judges_said(e["judges"]),
            e["image_path"] or "–",
        ]
        for e in examples
    ]
    return Table(
        table_id="failure-examples",
        title="Failed questions of those capabilities",
        headers=[
            "generator",
            "capability",
            "prompt",
            "prompt text",
            "question",
            "compliant answer",
            "judges said",
            "image",
        ],
        rows=rows,
        how_to_read="For each capability in the chart, failed questions whose prerequisites "
        "held, one per concept, those more judges failed first. 'compliant answer' is what a "
        "compliant image gives the question as written; 'judges said' lists every judge's own "
        "word (official one included) and whether it complies; 'image' is the image's path in "
        "its bundle, when there are images.",
        text_columns=8,
        empty="No failed question of a capability below the field in marts.fct_failure_examples.",
    )


def judges_said(judges: list[dict]) -> str:
    """`judge: yes (fails); other: no (complies); third: missing`, from the mart's `judges`."""
    return "; ".join(
        f"{j['judge_id']}: missing"
        if j["raw_answer"] is None
        else f"{j['judge_id']}: {j['raw_answer']} ({'complies' if j['complies'] else 'fails'})"
        for j in judges
    )
