"""A small world in which one generator lacks a tenth of its images (issue 32, "missing is never
no"), written two ways that METHOD 1 says are the same evidence.

The simulator's small world (24 concepts, seed 3, five generators, its own null answers at
`MISSING_RATE`), plus a second judge `j2` (the official judge's answers with every fifth one
turned) and two human ratings per image drawn, so that the judge marts have rows too.
`ABSENT_MODEL` lacks the judged evidence of `absent_prompts` (every eleventh prompt, both
languages among them):
- `absent`: no row in images, judgments of either judge or transcriptions, as in a release that
  lacks the images; only the human ratings remain (raters saw an image the judges said nothing
  about);
- `null`: the same, except that both judges' judgment rows are there with a null answer (the
  judge gave no usable answer).
"""

from __future__ import annotations

import json
from pathlib import Path

from ingestion.bundle.format import TABLES, write_bundle
from ingestion.sources.simulator import SimulationConfig, simulate

MODELS = ["ernie-image", "qwen-image", "flux2-dev", "hidream-i1", "lens"]
ABSENT_MODEL = "flux2-dev"
SECOND_JUDGE = "j2"
ROUTES = ("absent", "null")


def read_rows(bundle: Path) -> dict[str, list[dict]]:
    """The simulated bundle's JSONL tables as rows."""
    tables = {}
    for name in TABLES:
        path = bundle / f"{name}.jsonl"
        if path.exists():
            lines = path.read_text(encoding="utf-8").splitlines()
            tables[name] = [json.loads(line) for line in lines if line]
    return tables


def absent_prompts(prompts: list[dict]) -> set[str]:
    """Every eleventh prompt (sorted ids, from the first: an odd step takes both languages):
    about a tenth of the benchmark."""
    return set(sorted(p["prompt_id"] for p in prompts)[::11])


def with_second_judge(judgments: list[dict]) -> list[dict]:
    """The official judge's rows, and `j2`'s: the same answers with every fifth one turned."""
    turned = {"yes": "no", "no": "yes", None: None}
    second = [
        {
            **row,
            "judge_id": SECOND_JUDGE,
            "answer": turned[row["answer"]] if i % 5 == 0 else row["answer"],
        }
        for i, row in enumerate(judgments)
    ]
    return [{**row, "judge_id": "default"} for row in judgments] + second


def ratings_of(images: list[dict]) -> list[dict]:
    """Two raters per image, 1-5, from the image's position (any numbers serve: the test
    compares routes and counts images, not correlations)."""
    return [
        {
            "prompt_id": image["prompt_id"],
            "model_id": image["model_id"],
            "rater_id": rater,
            "rating": float(1 + (i * (2 + k)) % 5),
            "scale": "1-5",
        }
        for i, image in enumerate(images)
        for k, rater in enumerate(("w1", "w2"))
    ]


def write_routes(root: Path) -> tuple[dict[str, Path], set[str]]:
    """({route: bundle folder}, the prompts `ABSENT_MODEL` lacks)."""
    simulated = simulate(
        root / "simulated", SimulationConfig(concepts=24, seed=3, models=MODELS)
    ).out_dir
    tables = read_rows(simulated)
    absent = absent_prompts(tables["prompts"])

    def is_absent(row: dict) -> bool:
        return row["model_id"] == ABSENT_MODEL and row["prompt_id"] in absent

    judgments = with_second_judge(tables["judgments"])
    kept = {
        name: [r for r in rows if not is_absent(r)]
        if "model_id" in TABLES[name].column_names and name != "generators"
        else rows
        for name, rows in tables.items()
    }
    # every image drawn is rated, the missing ones too (raters saw an image the judges gave no
    # answer about): METHOD 15 must not score those as 0
    kept["ratings"] = ratings_of(tables["images"])
    bundles = {}
    for route in ROUTES:
        route_judgments = [r for r in judgments if not is_absent(r)]
        if route == "null":
            route_judgments += [
                {**r, "answer": None, "p_yes": None} for r in judgments if is_absent(r)
            ]
        bundles[route] = root / route
        write_bundle(bundles[route], {**kept, "judgments": route_judgments})
    return bundles, absent
