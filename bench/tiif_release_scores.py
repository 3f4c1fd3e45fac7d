"""TIIF-Bench's own score recomputed straight from its result files and compared with
`marts.fct_release_scores` (issue 32; docs/releases.md, "The release's own score").

The rule is TIIF's `eval/summary_results.py` (per generator, dimension and form: correct answers
over all answers of the folder's result files, `gt.strip().lower() == pred.strip().lower()`) and
`eval/summary_dimension_results.py` (the nine groups' means of their dimensions, the overall their
mean, NaN skipped), re-written here without pandas or openpyxl; the groups are written out below,
not read from seeds/tiif_score_groups.csv, so that the two routes stay independent.

    python -m bench.tiif_release_scores --release TIIF --warehouse WAREHOUSE.duckdb
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import duckdb

RESULTS = "eval-results/testmini_subset_eval_results"
NINE_GROUPS = [
    "shape+color color+texture texture+color shape+texture",
    "2d_spatial_relation 3d_spatial_relation action+2d action+3d",
    "numeracy negation differentiation comparison",
    "action+color action+texture color+2d color+3d shape+2d shape+3d texture+2d texture+3d",
    "numeracy+color numeracy+texture comparison+color comparison+texture "
    "differentiation+color differentiation+texture negation+color negation+texture",
    "numeracy+2d numeracy+3d comparison+2d comparison+3d "
    "differentiation+2d differentiation+3d negation+2d negation+3d",
    "text",
    "style",
    "real_world",
]


def mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def folder_accuracy(folder: Path) -> float | None:
    """TIIF's per-folder share: every answer of every result file, an answer that is neither yes
    nor no counted wrong, as its script counts it."""
    total = correct = 0
    for path in folder.glob("*.json"):
        result = json.loads(path.read_text(encoding="utf-8"))
        # zip stops at the shorter list, as TIIF's script does
        answers = zip(result.get("gt_answers", []), result.get("model_pred", []), strict=False)
        for gt, pred in answers:
            total += 1
            correct += gt.strip().lower() == str(pred).strip().lower()
    return correct / total if total else None


def release_accuracies(judge_dir: Path) -> dict[tuple[str, str, str], float | None]:
    """{(generator, dimension, form): share} over a judge's result folders."""
    folders = [f for f in judge_dir.glob("*/*/*") if f.is_dir()]
    return {(f.parent.parent.name, f.parent.name, f.name): folder_accuracy(f) for f in folders}


def overall(accuracies: dict, generator: str, form: str) -> float | None:
    groups = [[accuracies.get((generator, d, form)) for d in g.split()] for g in NINE_GROUPS]
    return mean([mean(group) for group in groups])


def mart_scores(con, judge: str) -> dict[tuple[str, str, str], float | None]:
    rows = con.execute(
        "select model_id, scope, prompt_form, release_score / 100 from marts.fct_release_scores "
        "where judge_id = ? and release = 'tiif-testmini' "
        "and scope_level in ('dimension', 'overall')",
        [judge],
    ).fetchall()
    return {(model, scope, form): score for model, scope, form, score in rows}


def compare(release: Path, warehouse: Path) -> list[str]:
    lines = []
    with duckdb.connect(str(warehouse), read_only=True) as con:
        for judge_dir in sorted((release / RESULTS).iterdir()):
            judge = judge_dir.name.removeprefix("testmini_subset_eval_results_")
            ours = release_accuracies(judge_dir)
            theirs = {k: v for k, v in ours.items() if v is not None}
            generators = sorted({g for g, _, _ in ours})
            for generator in generators:
                for form in ("short", "long"):
                    theirs[(generator, "__all__", form)] = overall(ours, generator, form)
            mart = mart_scores(con, judge)
            gaps = [abs(score - mart[key]) for key, score in theirs.items()]
            lines.append(
                f"{judge}: {len(theirs)} cells ({len(generators)} generators), largest "
                f"difference {100 * max(gaps):.2g} points"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", type=Path, required=True, help="a TIIF-Bench clone")
    parser.add_argument("--warehouse", type=Path, required=True, help="a built warehouse")
    args = parser.parse_args(argv)
    print("\n".join(compare(args.release, args.warehouse)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
