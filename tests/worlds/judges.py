"""A tiny two-judge world with human ratings whose agreement figures are worked by hand in
tests/marts/test_judges.py.

Three English prompts (each its own concept), two generators, judges `default` (official) and
`j2`:
- p1: q1 animals (root) -> q2 color -> q3 texture (a chain)
- p2: q1 animals (root), q2 man_made (root) -> q3 spatial (a diamond under both roots)
- p3: q1 man_made (root) -> q2 color
"""

from __future__ import annotations

from pathlib import Path

from ingestion.bundle.format import write_bundle

STRUCTURE = {
    "p1": [
        ("q1", "animals", [], "dog"),
        ("q2", "color", ["q1"], None),
        ("q3", "texture", ["q2"], None),
    ],
    "p2": [
        ("q1", "animals", [], "cat"),
        ("q2", "man_made", [], "box"),
        ("q3", "spatial", ["q1", "q2"], None),
    ],
    "p3": [("q1", "man_made", [], "cup"), ("q2", "color", ["q1"], None)],
}

Y, N, MISSING = "yes", "no", None
ANSWERS = {
    # (judge, model, prompt): answers in question order
    ("default", "m1", "p1"): [Y, N, Y],
    ("default", "m1", "p2"): [Y, Y, Y],
    ("default", "m1", "p3"): [N, Y],
    ("default", "m2", "p1"): [Y, Y, N],
    ("default", "m2", "p2"): [MISSING, Y, N],
    ("default", "m2", "p3"): [Y, Y],
    ("j2", "m1", "p1"): [Y, Y, Y],
    ("j2", "m1", "p2"): [Y, N, Y],
    ("j2", "m1", "p3"): [N, N],
    ("j2", "m2", "p1"): [Y, Y, N],
    ("j2", "m2", "p2"): [Y, Y, N],
    ("j2", "m2", "p3"): [Y, Y],
}

RATINGS = {
    # (model, prompt): the raters' 1-5 ratings (w1, w2, ...)
    ("m1", "p1"): [4, 5],
    ("m1", "p2"): [5],
    ("m1", "p3"): [1, 2],
    ("m2", "p1"): [3, 3],
    ("m2", "p2"): [2, 3],
    ("m2", "p3"): [5, 4],
}


def judges_bundle_tables() -> dict[str, list[dict]]:
    prompts = [
        {"prompt_id": p, "concept_id": p, "language": "en", "source": "hand", "text": f"{p}."}
        for p in STRUCTURE
    ]
    questions = [
        {
            "prompt_id": p,
            "question_id": q,
            "text": f"{capability}?",
            "capability": capability,
            "parents": parents,
            "entity": entity,
            "text_target": None,
        }
        for p, nodes in STRUCTURE.items()
        for q, capability, parents, entity in nodes
    ]
    judgments = [
        {
            "prompt_id": p,
            "model_id": m,
            "question_id": q,
            "answer": answer,
            "p_yes": None,
            "judge_id": judge,
        }
        for (judge, m, p), answers in ANSWERS.items()
        for (q, *_), answer in zip(STRUCTURE[p], answers, strict=True)
    ]
    ratings = [
        {
            "prompt_id": p,
            "model_id": m,
            "rater_id": f"w{i + 1}",
            "rating": float(r),
            "scale": "likert_1_5",
        }
        for (m, p), values in RATINGS.items()
        for i, r in enumerate(values)
    ]
    return {
        "prompts": prompts,
        "questions": questions,
        "judgments": judgments,
        "ratings": ratings,
    }


def write_judges_bundle(folder: Path) -> Path:
    write_bundle(folder, judges_bundle_tables())
    return folder
