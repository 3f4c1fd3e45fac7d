"""The figures of docs/releases.md on published releases (issue 24), each converted with the real
`qct2i import-release` command, exactly as a user runs it:

- TIIF-Bench's published answers (DIR/tiif), imported with `qct2i import-release tiif` and built
  with `qct2i build --official-judge` once per judge;
- OneIG-Bench's question graphs (DIR/oneig), which ship no answers: `qct2i import-release oneig
  --questions-only --out WORK/bank` writes a question bank, and its DSG atlas per language
  (METHOD 7: prompts, questions, roots, components, their tag counts, depth) comes from the marts
  themselves, built from that bank (`oneig_figures`).

    make release-figures RELEASES=DIR   # DIR/tiif: github.com/A113N-W3I/TIIF-Bench,
                                        # DIR/oneig: github.com/OneIG-Bench/OneIG-Benchmark
    .venv/bin/python -m bench.release_figures --releases DIR [--only tiif|oneig] [--out FILE]

A release whose folder DIR lacks, or that `--only` leaves out, is skipped (the script says which)
and its section of the existing FILE is kept as it was, so `--only oneig` redoes the OneIG-Bench
section in seconds without the TIIF builds (minutes). The releases carry no licence: their files
stay in DIR, never in the repository. Writes `bench/release_figures.md` and prints it.

Each release has one check independent of the converter and the marts, and the script stops if
it fails. TIIF-Bench: each (judge, generator)'s share of compliant answers, counted straight from
the release's result files (an answer equal to the compliant one, trimmed and lower-cased, over
the answers that are yes or no), must equal the mean native outcome of the warehouse's question
records built with that judge official. OneIG-Bench: networkx, on the bank's rows alone, must
count the marts' prompts, questions, roots, components, multi-tag components and each prompt's
depth (`bench.oneig_atlas.graph_counts`; that module's docstring has a second check, of the
capability rules).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import duckdb

from bench.commands import qct2i
from bench.dsg_figures import _table
from bench.oneig_atlas import oneig_figures

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
        f"scores (HCQ points, this judge):\n\n{worst}\n\n{deficit_table(con)}\n"
    )


def deficit_table(con: duckdb.DuckDBPyConnection) -> str:
    """Each generator's three capabilities furthest below the field (fct_capability_deficits:
    score minus the other generators' mean, with its 95% concept-bootstrap interval), and how
    many of its capabilities sit wholly below the field."""
    table = _table(
        con,
        """
        select model_id,
               count(*) filter (where is_below_field) as n_below_field,
               string_agg(
                   case when deficit_rank <= 3 and deficit < 0 then
                       capability || ' ' || printf('%+.1f', deficit)
                       || ' [' || printf('%+.1f', deficit_ci_lo) || ', '
                       || printf('%+.1f', deficit_ci_hi) || ']' end,
                   ', ' order by deficit_rank) as furthest_below_field
        from marts.fct_capability_deficits
        where language_scope = 'en'  -- TIIF is English
        group by model_id order by n_below_field desc, model_id
        """,
    )
    return (
        "Where each generator fails: its three capabilities furthest below the field (score "
        "minus the other generators' mean, points, with the 95% concept-bootstrap interval; "
        "`fct_capability_deficits`), and how many of its capabilities have an interval wholly "
        f"below 0:\n\n{table}"
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


TITLE = "# Figures on published releases (`make release-figures`)\n"
# The releases in the file's order: (folder under --releases, the heading its section starts with,
# the function writing that section from the folder and a scratch folder).
RELEASES = {
    "tiif": ("## TIIF-Bench", tiif_figures),
    "oneig": ("## OneIG-Bench", oneig_figures),
}


def sections_of(text: str) -> dict[str, str]:
    """The release sections of an existing figures file, by release name (a section runs from
    its `## ` heading to the next one)."""
    found = {}
    for part in re.split(r"(?m)^(?=## )", text)[1:]:
        for name, (heading, _) in RELEASES.items():
            if part.startswith(heading):
                found[name] = part.rstrip() + "\n"
    return found


def figures_text(sections: dict[str, str]) -> str:
    return TITLE + "".join(f"\n{sections[name]}" for name in RELEASES if name in sections)


def skip_reason(name: str, folder: Path, only: list[str] | None) -> str | None:
    """Why a release's section is not redone (None: it is)."""
    if only and name not in only:
        return "not asked for (--only)"
    if not folder.is_dir():
        return f"{folder} is not a folder"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--releases", type=Path, required=True, help="a folder holding tiif/ and/or oneig/"
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=list(RELEASES),
        help="redo this release's section only (repeatable); the others are kept from --out",
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    kept = sections_of(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    sections, done = dict(kept), []
    with tempfile.TemporaryDirectory(prefix="qct2i-releases-") as work:
        for name, (heading, figures) in RELEASES.items():
            folder = args.releases / name
            why = skip_reason(name, folder, args.only)
            if why is None:
                sections[name] = figures(folder, Path(work)).rstrip() + "\n"
                done.append(name)
                continue
            keeping = f"; its section of {args.out} is kept" if name in kept else ""
            print(f"skipped {heading[3:]}: {why}{keeping}", file=sys.stderr)
    if not done:
        print(f"no release to do under {args.releases}: nothing written", file=sys.stderr)
        return 2
    text = figures_text(sections)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
