"""Outcomes and transcription: judgments drawn level by level (parents first), each image's
latency, and the noisy OCR reading of each rendered text target (the package docstring,
"Outcome model" and "Text")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ingestion.sources.simulator.structure import _Structure
from ingestion.sources.simulator.vocabulary import _CJK, _DIGITS, _LOWER, _PUNCT, _SPURIOUS, _UPPER

# OCR adjudicator noise (per generator: unavailable rate drawn uniformly in this range).
OCR_UNAVAILABLE_RANGE = (0.01, 0.03)
OCR_SPURIOUS_BLOCK_RATE = 0.12
# Images: the sd of the log of each image's latency noise (mean-preserving lognormal).
LATENCY_LOG_SIGMA = 0.15


def _bernoulli(
    rng: np.random.Generator, prob: np.ndarray, stratum: np.ndarray, balanced: bool
) -> np.ndarray:
    """Draws with P(y_i = 1) = prob_i exactly.

    Balanced: systematic sampling over a random order within each stratum, so a stratum's
    success count is its expected count rounded up or down. Each draw is still Bernoulli(prob_i)
    on its own; only the stratum's sampling noise is removed. Independent: plain Bernoulli.
    """
    n = len(prob)
    if not balanced:
        return rng.random(n) < prob
    order = np.lexsort((rng.random(n), stratum))
    p = prob[order]
    s = stratum[order]
    first = np.r_[True, s[1:] != s[:-1]] if n else np.zeros(0, bool)
    group = np.cumsum(first) - 1
    cum = np.cumsum(p)
    start = (cum - p)[first]  # cumulative probability before each stratum
    after = cum - start[group] + rng.random(int(first.sum()))[group]
    y = np.empty(n, bool)
    y[order] = np.floor(after) > np.floor(after - p)
    return y


def _draw_outcomes(
    rng: np.random.Generator,
    structure: _Structure,
    cap_rates: np.ndarray,
    coupling: float,
    missing_rate: float,
    balanced: bool,
    prompt_effects: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Native outcomes y (bool) and the missing mask, drawn level by level (parents first).

    A question succeeds with its capability's rate when every parent answered "yes", else with
    rate * (1 - coupling). Balanced strata: capability x (valid / parents said yes but not valid /
    coupled), so the valid questions of a capability hit the rate up to rounding.
    """
    n = len(structure.q_cap)
    missing = rng.random(n) < missing_rate
    rate = cap_rates[structure.q_cap]
    if prompt_effects is not None:  # [concepts, capabilities] logit offsets
        rate = _shifted(rate, prompt_effects[structure.q_concept, structure.q_cap])
    y = np.zeros(n, bool)
    said_yes = np.zeros(n, bool)  # answered, and yes
    valid_yes = np.zeros(n, bool)  # valid (METHOD 2), and yes
    for level in structure.levels:
        par = structure.parents[level]
        has_parent = par >= 0
        par = np.maximum(par, 0)
        parents_said_yes = np.all(~has_parent | said_yes[par], axis=1)
        valid = np.all(~has_parent | valid_yes[par], axis=1) & ~missing[level]
        prob = rate[level] * np.where(parents_said_yes, 1.0, 1.0 - coupling)
        status = np.where(valid, 0, np.where(parents_said_yes, 1, 2))
        y[level] = _bernoulli(rng, prob, structure.q_cap[level] * 3 + status, balanced)
        said_yes[level] = y[level] & ~missing[level]
        valid_yes[level] = y[level] & valid
    return y, missing


def _shifted(rate: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """sigmoid(logit(rate) + offset); a rate of 0 or 1 stays where it is."""
    with np.errstate(divide="ignore"):
        logit = np.log(rate) - np.log1p(-rate)
    return 1.0 / (1.0 + np.exp(-(logit + offset)))


def _replacement_pool(ch: str) -> str:
    """Characters of the same script as `ch` (a non-BMP ideograph maps to BMP ones)."""
    if ch in _UPPER:
        return _UPPER
    if ch in _LOWER:
        return _LOWER
    if ch in _DIGITS:
        return _DIGITS
    if ord(ch) >= 0x2E80:
        return _CJK
    return _PUNCT


def _transcribe(
    rng: np.random.Generator,
    targets_by_image: Sequence[Sequence[str]],
    accuracy: float | np.ndarray,
    unavailable_rate: float,
    balanced: bool,
) -> list[tuple[str, list[str]]]:
    """(status, blocks) per image: each target rendered, then read back by a noisy OCR.

    A character is replaced with probability 1 - accuracy by one of the same script that no
    target of the image uses, so its UTF-16 edit distance is exactly the replaced characters'
    UTF-16 length and the optimal assignment pairs every target with its own rendering.
    `accuracy` is one rate, or one per image (prompt effects).
    """
    n_images = len(targets_by_image)
    unavailable = rng.random(n_images) < unavailable_rate
    chars = [
        ch
        for i, targets in enumerate(targets_by_image)
        if not unavailable[i]
        for t in targets
        for ch in t
    ]
    width = np.array([1 + (ord(ch) > 0xFFFF) for ch in chars], dtype=np.int64)
    if np.ndim(accuracy):
        per_char = [accuracy[i] for i, ts in enumerate(targets_by_image) if not unavailable[i]
                    for t in ts for _ in t]  # fmt: skip
        miss = 1.0 - np.asarray(per_char, dtype=float)
    else:
        miss = np.full(len(chars), 1.0 - accuracy)
    replaced = _bernoulli(rng, miss, width, balanced).tolist()
    out = []
    k = 0
    for i, targets in enumerate(targets_by_image):
        if unavailable[i]:
            out.append(("unavailable", []))
            continue
        foreign = set("".join(targets))
        blocks = []
        for t in targets:
            rendered = []
            for ch in t:
                if replaced[k]:
                    pool = [p for p in _replacement_pool(ch) if p not in foreign]
                    ch = pool[int(rng.integers(len(pool)))]
                rendered.append(ch)
                k += 1
            blocks.append("".join(rendered))
        if rng.random() < OCR_SPURIOUS_BLOCK_RATE:
            blocks.append("".join(rng.choice(list(_SPURIOUS), 1 + int(rng.integers(3)))))
        out.append(("ok", [blocks[j] for j in rng.permutation(len(blocks))]))
    return out


def _judgment_columns(
    rng: np.random.Generator,
    y: np.ndarray,
    missing: np.ndarray,
    prompt_ids: np.ndarray,
    model_id: str,
    question_ids: np.ndarray,
) -> dict[str, np.ndarray]:
    """One generator's judgments in one language, a column per contract column: p_yes above 0.5
    for a yes, below for a no, rounded to 4 decimals; a missing judgment has neither."""
    n_q = len(question_ids)
    p_yes = np.where(y, rng.uniform(0.5, 1.0, n_q), rng.uniform(0.0, 0.5, n_q)).round(4)
    p_yes[missing] = np.nan
    answer = np.where(y, "yes", "no").astype(object)
    answer[missing] = None
    return {
        "prompt_id": prompt_ids,
        "model_id": np.full(n_q, model_id, dtype=object),
        "question_id": question_ids,
        "answer": answer,
        "p_yes": p_yes,
    }


def _image_rows(
    rng: np.random.Generator,
    model_id: str,
    generator: Mapping[str, str],
    prompt_ids: Sequence[str],
) -> list[dict]:
    """One image per prompt; mean-preserving lognormal noise around the seed's GPU-seconds per
    megapixel."""
    width, height = int(generator["width"]), int(generator["height"])
    gpus = int(generator["gpus"])
    cost = float(generator["cost_gpu_s_per_mp"])
    noise = np.exp(rng.normal(0.0, LATENCY_LOG_SIGMA, len(prompt_ids)) - LATENCY_LOG_SIGMA**2 / 2)
    latency = cost * (width * height / 1e6) / gpus * noise
    return [
        {
            "image_id": f"{pid}--{model_id}",
            "prompt_id": pid,
            "model_id": model_id,
            "width": width,
            "height": height,
            "latency_s": round(float(lat), 4),
            "gpus": gpus,
            "path": None,
        }
        for pid, lat in zip(prompt_ids, latency.tolist(), strict=True)
    ]
