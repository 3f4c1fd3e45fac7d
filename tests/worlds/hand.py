"""A hand-built bilingual bundle whose every score is computed by hand in test_scoring.py.

Concept cA: q1 animals (root, dog) -> q2 color -> q3 texture (a chain); q4 man_made (root, sign);
q5 spatial with parents q1 and q4 (a diamond); q6 and q7 text_rendering under q4 with targets.
Concept cB: q1 style (root) and q2 text_rendering (root): two components.
"""

from __future__ import annotations

from pathlib import Path

from ingestion.bundle.format import write_bundle

TARGETS = {
    "en": {"cA": {"q6": "OPEN", "q7": "Cafe 𠮷"}, "cB": {"q2": "SALE"}},
    "zh": {"cA": {"q6": "欢迎", "q7": "福"}, "cB": {"q2": "特价"}},
}

STRUCTURE = {
    "cA": [
        ("q1", "animals", [], "dog"),
        ("q2", "color", ["q1"], None),
        ("q3", "texture", ["q2"], None),
        ("q4", "man_made", [], "sign"),
        ("q5", "spatial", ["q1", "q4"], None),
        ("q6", "text_rendering", ["q4"], None),
        ("q7", "text_rendering", ["q4"], None),
    ],
    "cB": [("q1", "style", [], None), ("q2", "text_rendering", [], None)],
}

Y, N, MISSING = "yes", "no", None
ANSWERS = {
    # (model, prompt): answers in question order
    ("m1", "cA-en"): [Y, N, Y, Y, Y, Y, N],
    ("m1", "cB-en"): [Y, N],
    ("m2", "cA-en"): [MISSING, Y, Y, N, Y, Y, Y],
    ("m2", "cB-en"): [Y, Y],
    ("m1", "cA-zh"): [Y] * 7,
    ("m1", "cB-zh"): [Y, Y],
    ("m2", "cA-zh"): [Y] * 7,
    ("m2", "cB-zh"): [Y, Y],
}

TRANSCRIPTIONS = [
    # OPEN exact; "Cafe 𠮷" read as "Cafe 吉": the non-BMP character costs 2.
    ("cA-en", "m1", "ok", ["Cafe 吉", "OPEN"]),
    ("cB-en", "m1", "ok", []),  # empty extraction: SALE costs 4
    ("cA-en", "m2", "unavailable", []),  # excluded
    ("cB-en", "m2", "ok", ["SALE IS ON NOW EVERYWHERE"]),  # capped at len("SALE") = 4
    ("cA-zh", "m1", "ok", ["欢迎"]),  # more targets than blocks: 福 unmatched costs 1
    ("cB-zh", "m1", "ok", ["特价"]),
    ("cB-zh", "m2", "unavailable", []),  # and (cA-zh, m2) has no row at all: excluded too
]


def hand_bundle_tables(with_transcriptions: bool = True) -> dict[str, list[dict]]:
    prompts, questions, judgments = [], [], []
    for concept, nodes in STRUCTURE.items():
        for language in ("en", "zh"):
            prompt_id = f"{concept}-{language}"
            prompts.append(
                {
                    "prompt_id": prompt_id,
                    "concept_id": concept,
                    "language": language,
                    "source": "hand",
                    "text": f"{concept} in {language}",
                }
            )
            for question_id, capability, parents, entity in nodes:
                questions.append(
                    {
                        "prompt_id": prompt_id,
                        "question_id": question_id,
                        "text": f"{capability}?",
                        "capability": capability,
                        "parents": parents,
                        "entity": entity,
                        "text_target": TARGETS[language][concept].get(question_id),
                    }
                )
    for (model_id, prompt_id), answers in ANSWERS.items():
        concept = prompt_id.split("-")[0]
        for (question_id, *_), answer in zip(STRUCTURE[concept], answers, strict=True):
            judgments.append(
                {
                    "prompt_id": prompt_id,
                    "model_id": model_id,
                    "question_id": question_id,
                    "answer": answer,
                    "p_yes": None if answer is None else (0.9 if answer == Y else 0.1),
                }
            )
    tables = {"prompts": prompts, "questions": questions, "judgments": judgments}
    if with_transcriptions:
        tables["transcriptions"] = [
            {"prompt_id": p, "model_id": m, "status": s, "blocks": b}
            for p, m, s, b in TRANSCRIPTIONS
        ]
    return tables


def write_hand_bundle(folder: Path, fmt: str = "jsonl", with_transcriptions: bool = True) -> Path:
    write_bundle(folder, hand_bundle_tables(with_transcriptions), fmt)
    return folder
