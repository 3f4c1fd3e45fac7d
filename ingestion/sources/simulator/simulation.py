"""The public entry point: `simulate(out_dir, SimulationConfig(...))` checks the config against the
seeds, draws the world and every generator's evidence in both languages, and writes the bundle
with its `planted.json`.

`SimulationConfig` is the one description of a simulated world: the Dagster asset
`simulated_bundle` (its run config converts to one), `qct2i demo` (which builds that run config
from one) and `python -m ingestion.sources.simulator` all build it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ingestion.bundle.format import BUNDLE_FORMATS
from ingestion.paths import SEEDS_DIR
from ingestion.sources.simulator.calibration import (
    DEFAULT_COUPLING,
    DEFAULT_SPREAD,
    DEMO_CONCEPTS,
    GENERATOR_SHAPE_MIX,
    LANGUAGES,
    MISSING_RATE,
    Rates,
    calibrated_rates,
    load_generators,
    load_table2,
    load_taxonomy,
    parse_scale,
)
from ingestion.sources.simulator.outcomes import (
    OCR_UNAVAILABLE_RANGE,
    _draw_outcomes,
    _image_rows,
    _judgment_columns,
    _shifted,
    _transcribe,
)
from ingestion.sources.simulator.structure import _flatten, _Structure, _world_rows
from ingestion.sources.simulator.vocabulary import TEXT_CAPABILITY
from ingestion.sources.simulator.world import _Concept, _WorldBuilder
from ingestion.sources.simulator.writing import _planted, _write_planted, _write_tables
from method.bootstrap import rng_for
from method.taxonomy import Taxonomy

JUDGMENT_COLUMNS = ("prompt_id", "model_id", "question_id", "answer", "p_yes")


@dataclass(frozen=True)
class SimulationConfig:
    """A simulated world and how its bundle is written; `SimulationConfig()` is the demo world.

    `concepts` is a count, or `demo` / `paper` (`parse_scale`). `rates` maps (model_id, language,
    capability) to a success rate that overrides the one calibrated from Table 2 (for
    `text_rendering` it is also the per-character accuracy); a generator absent from Table 2
    needs a rate for every language and capability. `models` restricts (and orders) the
    generators; by default every generator in the seed. `shape_mix` is the share of each
    generator's own capability shape (`capability_offsets`; 0 = the shared shape for every
    generator). `balanced` places each stratum's successes by systematic sampling instead of
    independent draws, and `prompt_effect_sd` > 0 plants per (concept, capability) logit offsets
    shared by all generators (package docstring, both).
    """

    concepts: int | str = DEMO_CONCEPTS
    seed: int = 0
    coupling: float = DEFAULT_COUPLING
    fmt: str = "jsonl"
    models: Sequence[str] | None = None
    rates: Rates | None = None
    spread: float = DEFAULT_SPREAD
    missing_rate: float = MISSING_RATE
    balanced: bool = False
    seeds_dir: Path = SEEDS_DIR
    shape_mix: float = GENERATOR_SHAPE_MIX
    prompt_effect_sd: float = 0.0


@dataclass(frozen=True)
class SimulationSummary:
    out_dir: Path
    fmt: str
    paths: Mapping[str, Path]  # table name -> file
    planted_path: Path
    row_counts: Mapping[str, int]
    concepts: int
    seed: int
    coupling: float
    models: tuple[str, ...]
    elapsed_s: float


@dataclass(frozen=True)
class _Plan:
    """A checked config and what the seeds give it."""

    config: SimulationConfig
    concepts: int
    taxonomy: Taxonomy
    generators: Mapping[str, Mapping[str, str]]  # model_id -> the generator seed's row
    model_ids: tuple[str, ...]
    rates: Mapping[tuple[str, str, str], float]  # the planted rates: calibrated, then overridden


@dataclass(frozen=True)
class _World:
    concepts: list[_Concept]
    structure: _Structure
    prompts: list[dict]
    questions: list[dict]
    flat_qid: np.ndarray  # question id of each flat question
    effects: np.ndarray | None  # [concepts, capabilities] logit offsets; None at sd 0
    has_text: bool
    text_targets: list[list[str]]  # per concept
    with_text: list[int]  # the concepts with a text target


@dataclass(frozen=True)
class _Evidence:
    judgments: dict[str, list[np.ndarray]]  # column -> one chunk per generator and language
    images: list[dict]
    transcriptions: list[dict]
    ocr_unavailable: dict[str, float]  # per generator


def simulate(out_dir: Path, config: SimulationConfig) -> SimulationSummary:
    """Simulate the world `config` describes; write its evidence bundle and `planted.json` into
    `out_dir`."""
    started = time.perf_counter()
    plan = _plan(config)
    out_dir = Path(out_dir)
    world = _draw_world(plan)
    evidence = _draw_evidence(plan, world)
    tables = _tables(plan, world, evidence)
    paths, row_counts = _write_tables(out_dir, config.fmt, tables, evidence.judgments)
    truth = _planted(
        plan.taxonomy,
        plan.model_ids,
        plan.rates,
        plan.generators,
        evidence.ocr_unavailable,
        config.shape_mix,
    )
    planted_path = _write_planted(out_dir, _settings(plan, world.structure) | truth)
    return SimulationSummary(
        out_dir=out_dir,
        fmt=config.fmt,
        paths=paths,
        planted_path=planted_path,
        row_counts=row_counts,
        concepts=plan.concepts,
        seed=config.seed,
        coupling=config.coupling,
        models=plan.model_ids,
        elapsed_s=time.perf_counter() - started,
    )


def _plan(config: SimulationConfig) -> _Plan:
    """Check `config` and resolve it against its seeds (every error `simulate` raises)."""
    if config.fmt not in BUNDLE_FORMATS:
        raise ValueError(f"unknown bundle format {config.fmt!r}; expected one of {BUNDLE_FORMATS}")
    if not 0.0 <= config.coupling <= 1.0:
        raise ValueError(f"coupling must lie in [0, 1], not {config.coupling}")
    if not config.prompt_effect_sd >= 0.0:
        raise ValueError(f"prompt_effect_sd must be >= 0, not {config.prompt_effect_sd}")
    concepts = parse_scale(config.concepts)
    taxonomy = load_taxonomy(config.seeds_dir)
    generators = {g["model_id"]: g for g in load_generators(config.seeds_dir)}
    model_ids = tuple(config.models) if config.models is not None else tuple(generators)
    unknown = [m for m in model_ids if m not in generators]
    if unknown or len(set(model_ids)) != len(model_ids) or not model_ids:
        raise ValueError(f"models must be distinct generators of the seed; unknown: {unknown}")
    rates = _planted_rates(config, taxonomy, model_ids)
    return _Plan(config, concepts, taxonomy, generators, model_ids, rates)


def _planted_rates(
    config: SimulationConfig, taxonomy: Taxonomy, model_ids: tuple[str, ...]
) -> dict[tuple[str, str, str], float]:
    """Table 2's calibrated rates, overridden by `config.rates`: one in [0, 1] for every cell."""
    table2 = load_table2(config.seeds_dir)
    planted = calibrated_rates(taxonomy, table2, model_ids, config.spread, config.shape_mix)
    overrides = config.rates or {}
    strange = [k for k in overrides if k[1] not in LANGUAGES or k[2] not in taxonomy.group_of]
    if strange:
        raise ValueError(f"rates for an unknown language or capability: {strange[:5]}")
    planted.update({k: float(v) for k, v in overrides.items() if k[0] in model_ids})
    cells = list(itertools.product(model_ids, LANGUAGES, taxonomy.capabilities))
    lacking = [cell for cell in cells if cell not in planted]
    if lacking:
        raise ValueError(f"no rate (Table 2 or `rates`) for {lacking[:5]} ({len(lacking)} cells)")
    bad = {k: v for k, v in planted.items() if not 0.0 <= v <= 1.0}
    if bad:
        raise ValueError(f"rates must lie in [0, 1]: {bad}")
    return planted


def _draw_world(plan: _Plan) -> _World:
    """The concepts from the world stream; prompt effects, when planted, from their own stream,
    so the other streams' draws stay what they were without them."""
    seed, sd = plan.config.seed, plan.config.prompt_effect_sd
    builder = _WorldBuilder(rng_for(seed, "world"), plan.taxonomy)
    concepts = [builder.concept(i) for i in range(plan.concepts)]
    structure = _flatten(concepts, plan.taxonomy)
    prompts, questions, flat_qid = _world_rows(concepts, structure)
    effects = None
    if sd > 0:
        shape = (plan.concepts, len(plan.taxonomy.capabilities))
        effects = rng_for(seed, "prompt_effects").normal(0, sd, shape)
    text_targets = [[q.target for q in c.questions if q.target] for c in concepts]
    return _World(
        concepts=concepts,
        structure=structure,
        prompts=prompts,
        questions=questions,
        flat_qid=flat_qid,
        effects=effects,
        has_text=builder.has_text,
        text_targets=text_targets,
        with_text=[ci for ci, t in enumerate(text_targets) if t],
    )


def _draw_evidence(plan: _Plan, world: _World) -> _Evidence:
    """Every generator's judgments, images and transcriptions in both languages."""
    seed = plan.config.seed
    ocr_unavailable = {
        m: float(rng_for(seed, "ocr", m).uniform(*OCR_UNAVAILABLE_RANGE)) for m in plan.model_ids
    }
    evidence = _Evidence({k: [] for k in JUDGMENT_COLUMNS}, [], [], ocr_unavailable)
    for m, lang in itertools.product(plan.model_ids, LANGUAGES):
        _draw_generator_language(plan, world, m, lang, evidence)
    return evidence


def _draw_generator_language(
    plan: _Plan, world: _World, m: str, lang: str, evidence: _Evidence
) -> None:
    """One generator in one language, from its own stream (outcomes, then p_yes, latency and
    OCR in this order), appended to `evidence`."""
    config, structure = plan.config, world.structure
    rng = rng_for(config.seed, "outcomes", m, lang)
    cap_rates = np.array([plan.rates[m, lang, t] for t in plan.taxonomy.capabilities])
    y, missing = _draw_outcomes(
        rng,
        structure,
        cap_rates,
        config.coupling,
        config.missing_rate,
        config.balanced,
        world.effects,
    )
    prompt_ids = [f"{cid}-{lang}" for cid in structure.concept_ids]
    per_question = np.array(prompt_ids, dtype=object)[structure.q_concept]
    columns = _judgment_columns(rng, y, missing, per_question, m, world.flat_qid)
    for name, column in columns.items():
        evidence.judgments[name].append(column)
    evidence.images.extend(_image_rows(rng, m, plan.generators[m], prompt_ids))
    if not world.has_text:
        return
    accuracy = plan.rates[m, lang, TEXT_CAPABILITY]
    if world.effects is not None:
        effect = world.effects[world.with_text, plan.taxonomy.capabilities.index(TEXT_CAPABILITY)]
        accuracy = _shifted(np.full(len(world.with_text), accuracy), effect)
    targets = [world.text_targets[ci] for ci in world.with_text]
    read = _transcribe(rng, targets, accuracy, evidence.ocr_unavailable[m], config.balanced)
    evidence.transcriptions.extend(
        {"prompt_id": prompt_ids[ci], "model_id": m, "status": st, "blocks": blocks}
        for ci, (st, blocks) in zip(world.with_text, read, strict=True)
    )


def _tables(plan: _Plan, world: _World, evidence: _Evidence) -> dict[str, list[dict]]:
    """The bundle's tables other than the judgments, as rows."""
    generators = [
        {
            "model_id": m,
            "display_name": plan.generators[m]["display_name"],
            "cost_gpu_s_per_mp": float(plan.generators[m]["cost_gpu_s_per_mp"]),
        }
        for m in plan.model_ids
    ]
    tables = {
        "prompts": world.prompts,
        "questions": world.questions,
        "generators": generators,
        "images": evidence.images,
    }
    if world.has_text:
        tables["transcriptions"] = evidence.transcriptions
    return tables


def _settings(plan: _Plan, structure: _Structure) -> dict:
    """The run's settings, the head of `planted.json`."""
    config, capabilities = plan.config, plan.taxonomy.capabilities
    per_capability = np.bincount(structure.q_cap, minlength=len(capabilities))
    settings = {
        "seed": config.seed,
        "concepts": plan.concepts,
        "languages": list(LANGUAGES),
        "models": list(plan.model_ids),
        "coupling": config.coupling,
        "spread": config.spread,
        "shape_mix": config.shape_mix,
        "missing_rate": config.missing_rate,
        "rates_overridden": config.rates is not None,
        "sampling": "balanced" if config.balanced else "independent",
        # per language (both languages share the structure); 0 = a capability without questions
        "questions_per_capability": {
            t: int(n) for t, n in zip(capabilities, per_capability, strict=True)
        },
    }
    # named only when planted: worlds without effects stay unchanged
    if config.prompt_effect_sd > 0:
        settings["prompt_effect_sd"] = config.prompt_effect_sd
    return settings
