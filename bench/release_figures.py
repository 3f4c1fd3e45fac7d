"""The figures of docs/releases.md on TIIF-Bench's published answers (issue 24), imported with
`qct2i import-release tiif` and built with `qct2i build --official-judge` once per judge, exactly
as a user runs them.

    make release-figures RELEASES=DIR   # DIR/tiif holds a copy of github.com/A113N-W3I/TIIF-Bench
    .venv/bin/python -m bench.release_figures --releases DIR [--out FILE]

The release carries no licence: its files stay in DIR, never in the repository. Writes
`bench/release_figures.md` and prints it. One check is independent of the converter and the
marts: each (judge, generator)'s share of compliant answers, counted straight from the release's
result files (an answer equal to the compliant one, trimmed and lower-cased, over the answers that
are yes or no), must equal the mean native outcome of the warehouse's question records built with
that judge official; the script stops if one differs.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

import duckdb

from bench.commands import qct2i
from bench.dsg_figures import _table

PROJECT_ROOT = Path(__file__).resolve().parents[1]
TIIF_JUDGES = ("GPT-4o", "QwenVL")
TIIF_RESULTS = Path("eval-results") / "testmini_subset_eval_results"
OUT = PROJECT_ROOT / "bench" / "release_figures.md"


def counted_compliance(root: Path, judge: str) -> dict[str, float]:
    """Per generator, the share of the judge's yes/no answers equal to the compliant answer,
    read from the result files alone (no converter code)."""
    hits, answered = Counter(), Counter()
    folder = root / TIIF_RESULTS / f"testmini_subset_eval_results_{judge}"
    for path in folder.glob("*/*/*/*.json"):
        generator = path.relative_to(root / TIIF_RESULTS).parts[1]
        result = json.loads(path.read_text(encoding="utf-8"))
        for predicted, compliant in zip(result["model_pred"], result["gt_answers"], strict=True):
            predicted = str(predicted).strip().lower()
            if predicted in ("yes", "no"):
                answered[generator] += 1
                hits[generator] += predicted == compliant.strip().lower()
    return {generator: hits[generator] / answered[generator] for generator in answered}


def warehouse_compliance(con: duckdb.DuckDBPyConnection) -> dict[str, float]:
    """Per generator, the mean native (unmasked) outcome over its answered questions."""
    rows = con.execute(
        "select model_id, avg(outcome) from marts.fct_question_records "
        "where outcome is not null group by model_id"
    ).fetchall()
    return dict(rows)


def check_counts(counted: dict[str, float], built: dict[str, float], judge: str) -> str:
    differing = {
        g: (counted.get(g), built.get(g))
        for g in counted.keys() | built.keys()
        if counted.get(g) is None or built.get(g) is None or abs(counted[g] - built[g]) > 1e-12
    }
    if differing:
        raise SystemExit(f"{judge}: counted and built compliance differ: {differing}")
    return f"{judge}: {len(built)} generators, every mean native outcome equals the count"


def separated_pairs(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """(generator pairs whose rank intervals do not overlap, all pairs)."""
    rows = con.execute("select rank_lo, rank_hi from marts.fct_rank_reliability").fetchall()
    pairs = [(a, b) for i, a in enumerate(rows) for b in rows[i + 1 :]]
    return sum(a[1] < b[0] or b[1] < a[0] for a, b in pairs), len(pairs)


def judge_section(con: duckdb.DuckDBPyConnection, judge: str, check: str) -> str:
    separated, pairs = separated_pairs(con)
    board = _table(
        con,
        "select model_id, hcq_total, rank, rank_lo, rank_hi from marts.fct_rank_reliability "
        "order by rank",
    )
    worst = _table(
        con,
        """
        select model_id, string_agg(capability || ' ' || round(score, 1), ', '
                                    order by score) as worst_capabilities
        from (
            select model_id, capability, score,
                   row_number() over (partition by model_id order by score, capability) as k
            from marts.fct_capability_scores
            where score is not null and language_scope = 'en'  -- TIIF is English
        ) where k <= 3
        group by model_id order by model_id
        """,
    )
    return (
        f"### Official judge {judge}\n\n{check}. The 95% rank intervals separate {separated} of "
        f"the {pairs} generator pairs.\n\n{board}\n\nEach generator's three lowest capability "
        f"scores (HCQ points, this judge):\n\n{worst}\n"
    )


def agreement_section(con: duckdb.DuckDBPyConnection) -> str:
    kappa = _table(
        con,
        "select capability, n_shared, agreement_frac, kappa, kappa_ci_lo, kappa_ci_hi "
        "from marts.fct_judge_agreement order by capability = '__all__' desc, kappa",
    )
    return f"### The two judges' agreement (`fct_judge_agreement`, every shared item)\n\n{kappa}\n"


def disagreement_section(con: duckdb.DuckDBPyConnection) -> str:
    """Generator pairs the two judges' leaderboards order differently."""
    rows = con.execute(
        """
        with board as (
            select judge_id, model_id, hcq_total from marts.fct_hcq_leaderboard_by_judge
            where language_scope = 'en'
        ), pairs as (
            select a1.model_id as a, b1.model_id as b,
                   a1.hcq_total - b1.hcq_total as diff_1, a2.hcq_total - b2.hcq_total as diff_2
            from board a1
            join board b1 on a1.judge_id = b1.judge_id and a1.model_id < b1.model_id
            join board a2 on a2.model_id = a1.model_id and a2.judge_id <> a1.judge_id
            join board b2 on b2.model_id = b1.model_id and b2.judge_id = a2.judge_id
            where a1.judge_id = ?
        )
        select a, b, round(diff_1, 2), round(diff_2, 2) from pairs
        where sign(diff_1) <> sign(diff_2) order by abs(diff_1) + abs(diff_2) desc
        """,
        [TIIF_JUDGES[0]],
    ).fetchall()
    n_models = con.execute(
        "select count(distinct model_id) from marts.fct_hcq_leaderboard_by_judge"
    ).fetchall()[0][0]
    total = n_models * (n_models - 1) // 2
    listed = "\n".join(
        f"- {a} vs {b}: {TIIF_JUDGES[0]} {d1:+.2f}, {TIIF_JUDGES[1]} {d2:+.2f} HCQ points"
        for a, b, d1, d2 in rows[:10]
    )
    return (
        f"### Where the two judges' rankings disagree\n\n{len(rows)} of the {total} generator "
        f"pairs are ordered differently (largest first, at most ten):\n\n{listed}\n"
    )


def tiif_figures(root: Path, work: Path) -> str:
    warehouse = work / "tiif.duckdb"
    imported = qct2i(["import-release", "tiif", f"--root={root}"], warehouse)
    summary = "\n".join(
        line for line in imported.splitlines() if not line.startswith(("  e.g.", "into", "bundle"))
    )
    sections = [f"## TIIF-Bench (testmini)\n\n```\n{summary}\n```\n"]
    for judge in TIIF_JUDGES:
        qct2i(["build", f"--official-judge={judge}"], warehouse)
        with duckdb.connect(str(warehouse), read_only=True) as con:
            check = check_counts(counted_compliance(root, judge), warehouse_compliance(con), judge)
            sections.append(judge_section(con, judge, check))
            if judge == TIIF_JUDGES[-1]:
                sections += [agreement_section(con), disagreement_section(con)]
    return "\n".join(sections)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--releases", type=Path, required=True, help="a folder holding tiif/")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="qct2i-releases-") as work:
        text = "# Figures on published releases (`make release-figures`)\n\n"
        text += tiif_figures(args.releases / "tiif", Path(work))
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
