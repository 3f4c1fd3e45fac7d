"""Judge and human agreement (CONTRACTS "Additions"): shown when the warehouse has the marts
`fct_judge_agreement` / `fct_human_agreement`, else a note that says what would fill them."""

from __future__ import annotations

from reporting.facts import column_names
from reporting.page import Note, Section, Table
from reporting.reader import Reader


def agreement_section(reader: Reader) -> Section:
    return Section(
        anchor="agreement",
        title="Judge and human agreement",
        intro="How far the judge's answers can be trusted: agreement between judges on the same "
        "questions, and between the judge's scores and human ratings of the same images.",
        items=[
            mart_table(
                reader,
                "fct_judge_agreement",
                "Judge agreement (Cohen's kappa per capability; __all__ overall)",
                "Pairs of judges on the questions both answered: raw agreement and Cohen's "
                "kappa with its interval; kappa near 1 is agreement beyond chance, near 0 none.",
                "an evidence bundle with two or more judges (judgments keyed by judge_id)",
            ),
            mart_table(
                reader,
                "fct_human_agreement",
                "Human agreement (rank correlation with human ratings)",
                "Per judge: Spearman and Kendall correlation between its per-image scores and "
                "the human ratings, with intervals, and the correlation of the generator rankings.",
                "human ratings of the images (the bundle's optional `ratings` file)",
            ),
        ],
    )


def mart_table(reader: Reader, mart: str, title: str, how: str, needs: str) -> Table | Note:
    """Every row and column of `mart`, or a note when the warehouse does not have it."""
    if not reader.has("marts", mart):
        return Note(f"{title}: not in this warehouse (marts.{mart} is built from {needs}).")
    columns = column_names(reader.con, "marts", mart)
    rows = reader.rows(f"select * from marts.{mart} order by all")
    return Table(
        table_id=mart.removeprefix("fct_").replace("_", "-"),
        title=title,
        headers=columns,
        rows=[[_cell(r[c]) for c in columns] for r in rows],
        how_to_read=how,
        text_columns=sum(1 for r in rows[:1] for c in columns if isinstance(r[c], str)) or 1,
        empty=f"marts.{mart} has no rows: it is built from {needs}.",
    )


def _cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)
