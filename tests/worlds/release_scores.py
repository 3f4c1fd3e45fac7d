"""A hand world of release-sourced prompts for `fct_release_scores` (issue 32): OneIG-Bench-like
prompts (`source` `oneig/<category>`) with a depth-2 chain under a failed root, where OneIG's
zero-out rule and METHOD 2's recursive masking differ, and TIIF-Bench-like prompts (`source`
`tiif-testmini/<dimension>`, a short and a long form per concept) in three basic dimensions and
one advanced one. Two generators, two judges (`J1` official), a null answer and a whole absent
image. Ids and texts are our own; tests/marts/test_release_scores.py works every figure by hand.
"""

from __future__ import annotations

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
