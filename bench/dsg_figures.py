"""The figures of docs/marts.md on real third-party data (issue 15): the DSG release's TIFA160
subset (five generators, three VQA judges, human Likert ratings) and the whole of DSG-1k, each
imported with `qct2i import-dsg` and built with `qct2i build` exactly as a user runs them.

    make dsg-figures     # or: .venv/bin/python -m bench.dsg_figures [--data DIR] [--out FILE]

Writes `bench/dsg_figures.md` (the tables docs/marts.md quotes) and prints it. The official judge of
the marts is PaLI-17B (`pali17b`, `qct2i build --official-judge`); every judge's leaderboard is in
`fct_hcq_leaderboard_by_judge`, and `fct_human_agreement` says which judge the humans agree with.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

import duckdb

from bench.commands import qct2i
from bench.subsets import STATISTICS
from method.bootstrap import stats_from_arrow
from method.prompt_difficulty import prompt_difficulty

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DSG_DATA = PROJECT_ROOT.parent / "shared" / "data" / "dsg"
JUDGES = ("pali17b", "mplug", "instructblip")
OFFICIAL_JUDGE = "pali17b"
OUT = PROJECT_ROOT / "bench" / "dsg_figures.md"


def import_and_build(data: Path, warehouse: Path, splits: Sequence[str]) -> str:
    """`qct2i import-dsg` of the release (restricted to `splits`, if any), then `qct2i build`."""
    answers = [f"--answers={data / 'vqa_answers_release' / f'{j}_dsg.csv'}" for j in JUDGES]
    args = ["import-dsg", f"--questions={data / 'dsg' / 'data' / 'dsg-1k-anns.csv'}", *answers]
    args += [f"--ratings={data / 'dsg' / 'data' / 'tifa160-likert-anns.csv'}"]
    args += [f"--split={split}" for split in splits]
    imported = qct2i(args, warehouse)
    qct2i(["build", f"--official-judge={OFFICIAL_JUDGE}"], warehouse)
    return imported


def _table(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """A query's result as a markdown table (floats to 3 decimals)."""
    cursor = con.execute(sql)
    header = [d[0] for d in cursor.description]
    rows = cursor.fetchall()
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in rows:
        cells = ["" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v) for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def tifa160_section(con: duckdb.DuckDBPyConnection, imported: str) -> str:
    dirty = next(line for line in imported.splitlines() if line.startswith("dirty rows:"))
    leaderboards = _table(
        con,
        """
        SELECT judge_id, model_id, round(hcq_total, 2) AS hcq_total, rank
        FROM marts.fct_hcq_leaderboard_by_judge
        WHERE language_scope = 'en'
        ORDER BY judge_id, rank, model_id""",
    )
    kappa = _table(
        con,
        """
        SELECT judge_a, judge_b, n_shared, agreement_frac, kappa, kappa_ci_lo, kappa_ci_hi
        FROM marts.fct_judge_agreement
        WHERE capability = '__all__'
        ORDER BY judge_a, judge_b""",
    )
    humans = _table(
        con,
        """
        SELECT judge_id, n_images, spearman, spearman_ci_lo, spearman_ci_hi, kendall,
               kendall_ci_lo, kendall_ci_hi, ranking_spearman, ranking_matches
        FROM marts.fct_human_agreement
        ORDER BY judge_id""",
    )
    human_ranking = _table(
        con,
        """
        WITH images AS (
            SELECT model_id, prompt_id, avg(rating) AS image_rating
            FROM staging.stg_ratings
            GROUP BY ALL
        )
        SELECT model_id, count(*) AS n_images, avg(image_rating) AS mean_rating
        FROM images
        GROUP BY model_id
        ORDER BY mean_rating DESC""",
    )
    return "\n\n".join(
        [
            "## TIFA160 (five generators, three judges, human ratings)",
            f"`qct2i import-dsg ... --split=tifa160`: {dirty}",
            "HCQ per judge (en, points; `marts.fct_hcq_leaderboard_by_judge`):",
            leaderboards,
            "Judge agreement over all capabilities (`marts.fct_judge_agreement`, `__all__`):",
            kappa,
            "Agreement with the mean human Likert rating (`marts.fct_human_agreement`):",
            humans,
            "Human ranking: per generator, the mean over its rated images of their mean rating "
            "(`staging.stg_ratings`; 800 images, one of which no judge answered):",
            human_ranking,
        ]
    )


def prompt_difficulty_section(warehouse: Path) -> str:
    """The shared prompt difficulty of TIFA160's evidence as each judge reads it
    (`method.prompt_difficulty`; the warehouse, built with the official judge, is rebuilt with
    each other judge official in turn): the sd the simulator's calibrated subset world plants
    (`make subset-figures`)."""
    rows = [
        "| judge_id | prompt_effect_sd | log_likelihood_ratio | n_cells |",
        "| --- | --- | --- | --- |",
    ]
    others = [judge for judge in JUDGES if judge != OFFICIAL_JUDGE]
    for judge in (OFFICIAL_JUDGE, *others):
        if judge != OFFICIAL_JUDGE:  # the official judge's build is the one already there
            qct2i(["build", f"--official-judge={judge}"], warehouse)
        with duckdb.connect(str(warehouse), read_only=True) as con:
            stats = stats_from_arrow(
                *(con.sql(f"select * from {t}").to_arrow_table() for t in STATISTICS)
            )
        fit = prompt_difficulty(stats.numerator, stats.denominator)
        rows.append(f"| {judge} | {fit.sd:.2f} | {fit.log_likelihood_ratio:.1f} | {fit.n_cells} |")
    return "\n\n".join(
        [
            "Shared prompt difficulty (`method.prompt_difficulty`: the sd of a logit effect per "
            "prompt x capability shared by the five generators, by marginal maximum likelihood; "
            "the warehouse rebuilt with each judge official):",
            "\n".join(rows),
        ]
    )


def dsg_1k_section(con: duckdb.DuckDBPyConnection, imported: str) -> str:
    dirty = next(line for line in imported.splitlines() if line.startswith("dirty rows:"))
    atlas = _table(con, "SELECT * FROM marts.agg_dsg_atlas")
    classes = _table(
        con,
        """
        SELECT dirty_class, action, count(*) AS n_rows
        FROM marts.fct_conversion_report
        GROUP BY ALL
        ORDER BY dirty_class""",
    )
    return "\n\n".join(
        [
            "## DSG-1k (all 1,060 prompts; the answers cover SD 2.1 on every prompt)",
            f"`qct2i import-dsg ...`: {dirty}",
            "Repairs and drops in the warehouse (`marts.fct_conversion_report`):",
            classes,
            "The DSG atlas (`marts.agg_dsg_atlas`):",
            atlas,
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DSG_DATA, help="the DSG release folder")
    parser.add_argument("--out", type=Path, default=OUT, help="the markdown file to write")
    args = parser.parse_args(argv)
    sections = ["# DSG release figures (`make dsg-figures`)"]
    with tempfile.TemporaryDirectory(prefix="qct2i-dsg-figures-") as scratch:
        for name, splits, section in (
            ("tifa160", ["tifa160"], tifa160_section),
            ("dsg1k", [], dsg_1k_section),
        ):
            warehouse = Path(scratch) / name / "qct2i.duckdb"
            imported = import_and_build(args.data, warehouse, splits)
            with duckdb.connect(str(warehouse), read_only=True) as con:
                sections.append(section(con, imported))
            if name == "tifa160":
                sections.append(prompt_difficulty_section(warehouse))
    text = "\n\n".join(sections) + "\n"
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
