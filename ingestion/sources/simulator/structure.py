"""The flattened structure both languages share (one row per question, parents as global
indices, questions grouped by depth), and the bundle's prompt and question rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ingestion.sources.simulator.calibration import LANGUAGES
from ingestion.sources.simulator.world import _Concept, _prompt_text
from method.taxonomy import Taxonomy


@dataclass(frozen=True)
class _Structure:
    concept_ids: list[str]
    q_concept: np.ndarray  # concept index per question
    q_local: np.ndarray  # question index within its prompt
    q_cap: np.ndarray  # capability index (taxonomy order)
    parents: np.ndarray  # (n, max_parents) global indices, -1 padded
    levels: list[np.ndarray]  # question indices by depth (longest path from a root)


def _flatten(concepts: list[_Concept], taxonomy: Taxonomy) -> _Structure:
    cap_index = {c: i for i, c in enumerate(taxonomy.capabilities)}
    n = sum(len(c.questions) for c in concepts)
    max_parents = max((len(q.parents) for c in concepts for q in c.questions), default=0)
    q_concept = np.empty(n, np.int64)
    q_local = np.empty(n, np.int64)
    q_cap = np.empty(n, np.int64)
    parents = np.full((n, max(max_parents, 1)), -1, np.int64)
    depth = np.empty(n, np.int64)
    g = 0
    for ci, c in enumerate(concepts):
        start = g
        for li, q in enumerate(c.questions):
            q_concept[g], q_local[g], q_cap[g] = ci, li, cap_index[q.capability]
            # Parents always precede their children, so depth is known in one pass.
            depth[g] = 0
            for k, p in enumerate(q.parents):
                parents[g, k] = start + p
                depth[g] = max(depth[g], depth[start + p] + 1)
            g += 1
    levels = [np.flatnonzero(depth == d) for d in range(int(depth.max(initial=0)) + 1)]
    return _Structure([c.concept_id for c in concepts], q_concept, q_local, q_cap, parents, levels)


def _world_rows(
    world: Sequence[_Concept], structure: _Structure
) -> tuple[list[dict], list[dict], np.ndarray]:
    """Prompt and question rows for both languages, and the question id of each flat question."""
    prompts, questions, qids_by_concept = [], [], []
    for c in world:
        text = dict(zip(LANGUAGES, _prompt_text(c), strict=True))
        width = max(2, len(str(len(c.questions))))
        qids = [f"q{i + 1:0{width}d}" for i in range(len(c.questions))]
        qids_by_concept.append(qids)
        for lang in LANGUAGES:
            pid = f"{c.concept_id}-{lang}"
            prompts.append(
                {
                    "prompt_id": pid,
                    "concept_id": c.concept_id,
                    "language": lang,
                    "source": c.source,
                    "text": text[lang],
                }
            )
            questions.extend(
                {
                    "prompt_id": pid,
                    "question_id": qid,
                    "text": q.text_en if lang == "en" else q.text_zh,
                    "capability": q.capability,
                    "parents": [qids[p] for p in q.parents],
                    "entity": q.entity,
                    "text_target": q.target,
                }
                for qid, q in zip(qids, c.questions, strict=True)
            )
    pairs = zip(structure.q_concept.tolist(), structure.q_local.tolist(), strict=True)
    flat_qid = np.array([qids_by_concept[ci][li] for ci, li in pairs], dtype=object)
    return prompts, questions, flat_qid
