"""A hand world of release-sourced prompts for `fct_release_scores` (issue 32): OneIG-Bench-like
prompts (`source` `oneig/<category>`) with a depth-2 chain under a failed root, where OneIG's
zero-out rule and METHOD 2's recursive masking differ, and TIIF-Bench-like prompts (`source`
`tiif-testmini/<dimension>`, a short and a long form per concept) in three basic dimensions and
one advanced one. Two generators, two judges (`J1` official), a null answer and a whole absent
image. Ids and texts are our own; tests/marts/test_release_scores.py works every figure by hand.
"""

from __future__ import annotations

import random
from pathlib import Path

from ingestion.bundle.format import write_bundle

OFFICIAL_JUDGE = "J1"
Y, N, MISSING = "yes", "no", None

# concept -> (source, forms, [(question, capability, parents, compliant answer)])
PROMPTS = {
    "oneig-human-000": (
        "oneig/Portrait",
        ("en", "zh"),
        [
            ("q1", "humans", [], "yes"),  # the root: a depth-2 chain q1 -> q2 -> q3
            ("q2", "color", ["q1"], "yes"),
            ("q3", "state", ["q2"], "yes"),
            ("q4", "man_made", [], "yes"),
        ],
    ),
    "oneig-object-000": (
        "oneig/General_Object",
        ("en",),
        [("q1", "man_made", [], "yes"), ("q2", "color", ["q1"], "yes")],
    ),
    # scored by OCR in OneIG, not by alignment: no row of the mart
    "oneig-text-000": ("oneig/Text_Rendering", ("en",), [("q1", "text_rendering", [], "yes")]),
    "tiif-negation-0": (
        "tiif-testmini/negation",
        ("short", "long"),
        # q2 is a negation: a compliant image answers "no", stored turned to target-yes
        [("q1", "man_made", [], "yes"), ("q2", "logical_constraints", ["q1"], "no")],
    ),
    "tiif-numeracy-0": (
        "tiif-testmini/numeracy",
        ("short", "long"),
        [
            ("q1", "quantification_comparison", [], "yes"),
            ("q2", "quantification_comparison", [], "yes"),
            ("q3", "spatial", ["q1"], "yes"),
        ],
    ),
    "tiif-numeracy-1": (
        "tiif-testmini/numeracy",
        ("short", "long"),
        [("q1", "quantification_comparison", [], "yes")],
    ),
    "tiif-2d_spatial_relation-0": (
        "tiif-testmini/2d_spatial_relation",
        ("short", "long"),
        [("q1", "spatial", [], "yes")],
    ),
    "tiif-style-0": ("tiif-testmini/style", ("short", "long"), [("q1", "style", [], "yes")]),
}

# (judge, model, prompt): the stored (target-yes) answers in question order; a prompt a judge and
# model lack here is an image that judge never answered about
ANSWERS = {
    ("J1", "gA", "oneig-human-000-en"): [N, Y, Y, Y],
    ("J1", "gA", "oneig-object-000-en"): [Y, MISSING],
    ("J1", "gA", "oneig-text-000-en"): [Y],
    ("J1", "gA", "oneig-human-000-zh"): [Y, N, Y, Y],
    ("J1", "gB", "oneig-human-000-en"): [Y, N, Y, N],
    ("J1", "gB", "oneig-text-000-en"): [N],
    ("J1", "gB", "oneig-human-000-zh"): [Y, Y, Y, Y],
    ("J2", "gA", "oneig-human-000-en"): [Y, Y, Y, Y],
    ("J2", "gA", "oneig-object-000-en"): [N, Y],
    ("J1", "gA", "tiif-negation-0-short"): [N, Y],
    ("J1", "gA", "tiif-numeracy-0-short"): [Y, N, Y],
    ("J1", "gA", "tiif-numeracy-1-short"): [Y],
    ("J1", "gA", "tiif-2d_spatial_relation-0-short"): [Y],
    ("J1", "gA", "tiif-style-0-short"): [N],
    ("J1", "gA", "tiif-negation-0-long"): [Y, Y],
    ("J1", "gA", "tiif-numeracy-0-long"): [Y, Y, MISSING],
    ("J1", "gA", "tiif-numeracy-1-long"): [Y],
    ("J1", "gA", "tiif-2d_spatial_relation-0-long"): [Y],
    ("J1", "gA", "tiif-style-0-long"): [Y],
    ("J1", "gB", "tiif-style-0-short"): [Y],
}


def _prompt_id(concept: str, form: str) -> str:
    return f"{concept}-{form}"


def release_scores_tables() -> dict[str, list[dict]]:
    prompts, questions, judgments = [], [], []
    nodes_of = {}
    for concept, (source, forms, nodes) in PROMPTS.items():
        for form in forms:
            prompt_id = _prompt_id(concept, form)
            nodes_of[prompt_id] = nodes
            language = "zh" if form == "zh" else "en"
            prompts.append(
                {
                    "prompt_id": prompt_id,
                    "concept_id": concept,
                    "language": language,
                    "source": source,
                    "text": f"{concept} ({form})",
                }
            )
            for question_id, capability, parents, compliant in nodes:
                questions.append(
                    {
                        "prompt_id": prompt_id,
                        "question_id": question_id,
                        "text": f"{capability}?",
                        "capability": capability,
                        "parents": parents,
                        "entity": None,
                        "text_target": None,
                        "compliant_answer": compliant,
                    }
                )
    for (judge_id, model_id, prompt_id), answers in ANSWERS.items():
        for (question_id, *_), answer in zip(nodes_of[prompt_id], answers, strict=True):
            judgments.append(
                {
                    "prompt_id": prompt_id,
                    "model_id": model_id,
                    "question_id": question_id,
                    "answer": answer,
                    "p_yes": None,
                    "judge_id": judge_id,
                }
            )
    return {"prompts": prompts, "questions": questions, "judgments": judgments}


def write_release_scores_bundle(folder: Path) -> Path:
    write_bundle(folder, release_scores_tables(), "jsonl")
    return folder


# The many-prompts variant, for checks no hand world is large enough for: a mean over a few
# values comes out the same in any order, over hundreds its last bits follow the order.
ONEIG_CATEGORIES = ("Portrait", "General_Object", "Anime_Stylization", "Multilingualism")
TIIF_DIMENSIONS = ("numeracy", "negation", "2d_spatial_relation", "color+3d", "style", "text")
CAPABILITIES = ("humans", "man_made", "color", "state", "spatial", "texture", "style")


def many_release_prompts_tables(seed: int, per_scope: int = 60) -> dict[str, list[dict]]:
    """`per_scope` OneIG-like prompts per category (en, and zh for every third) and TIIF-like
    concepts per dimension (short and long forms), each with one to four questions in a chain;
    two generators answered by the official judge at random (seeded), a twentieth missing."""
    rng = random.Random(seed)
    prompts, questions, judgments = [], [], []
    sources = [(f"oneig/{c}", ("en", "zh")) for c in ONEIG_CATEGORIES]
    sources += [(f"tiif-testmini/{d}", ("short", "long")) for d in TIIF_DIMENSIONS]
    for source, forms in sources:
        for i in range(per_scope):
            concept = f"{source.replace('/', '-').replace('+', '_')}-{i:03d}"
            n_questions = rng.randint(1, 4)
            for form in forms if i % 3 == 0 or forms[0] == "short" else forms[:1]:
                prompt_id = _prompt_id(concept, form)
                language = "zh" if form == "zh" else "en"
                text = f"{concept} ({form})"
                prompts.append(
                    {"prompt_id": prompt_id, "concept_id": concept, "language": language}
                    | {"source": source, "text": text}
                )
                for q in range(1, n_questions + 1):
                    parents = [f"q{q - 1}"] if q > 1 else []
                    capability = CAPABILITIES[(i + q) % len(CAPABILITIES)]
                    questions.append(
                        {"prompt_id": prompt_id, "question_id": f"q{q}", "text": f"{capability}?"}
                        | {"capability": capability, "parents": parents, "entity": None}
                        | {"text_target": None, "compliant_answer": "yes"}
                    )
                    for model_id in ("gA", "gB"):
                        draw = rng.random()
                        answer = MISSING if draw < 0.05 else Y if draw < 0.7 else N
                        judgments.append(
                            {"prompt_id": prompt_id, "model_id": model_id, "question_id": f"q{q}"}
                            | {"answer": answer, "p_yes": None, "judge_id": OFFICIAL_JUDGE}
                        )
    return {"prompts": prompts, "questions": questions, "judgments": judgments}
