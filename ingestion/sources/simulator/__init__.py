"""A bilingual world with planted truth, written as an evidence bundle (CONTRACTS.md).

The simulator stands in for the GPU assets (generation, VQA adjudication, OCR) so that the whole
pipeline runs on a laptop, and so that tests can check what the marts recover against what was
planted. It is calibrated to the paper's Table 2 (`seeds/paper_table2.csv`).

The world:
- `concepts` conceptual prompts, each in `en` and `zh`. Both language versions share one DSG
  (question ids, capabilities, parents, entity keys, text targets); only the wording differs.
- A prompt is 1-4 weakly connected components: multi-entity scenes (entity roots, attribute
  children, relations with two entity parents, text and semantics children, depth-2 questions),
  single objects with attributes, text carriers (a sign, a poster) with 1-2 targets, and global
  semantics roots (style, time, atmosphere...). Entity keys come from a small vocabulary per
  capability, so the same entity recurs across many prompts (METHOD 8).
- Outcome model (per model m, language l, capability t, planted rate r = rate(m, l, t)): a root
  succeeds with probability r; a child succeeds with probability r when every parent answered
  "yes", else r * (1 - coupling). Conditional on all ancestors answering "yes", a question
  succeeds with probability r, so the dependency-masked score (Eq. 2) estimates r whatever the
  coupling, while coupling > 0 plants the parent -> child co-failure that METHOD 9 measures.
  A judgment is missing (answer and p_yes null) with probability `MISSING_RATE`, independently
  of the outcome, and a missing parent counts as "not yes".
- Draws are independent Bernoulli by default, so the world has honest sampling noise (the
  bootstrap and coverage studies depend on it). `balanced=True` instead places the successes of
  each stratum (depth level x capability x valid / not valid / coupled) by systematic sampling
  over a random order, so their count is the expected count rounded: each question's marginal
  law is unchanged but the leaderboard's sampling noise is gone (useful for exact-recovery
  checks at small scale; wrong for anything that measures uncertainty).
- Calibration: a capability's rate is its group's Table 2 view v plus a per-generator offset,
  r_mt = v + d_mt * spread * min(v, 1 - v). The shared shape s_t is evenly spaced in [-1, 1] by
  capability order within the group; generator m mixes it with its own permutation of it,
  d_mt = (1 - mix) * s_t + mix * s_{pi_m(t)}, pi_m a permutation within each group drawn from a
  fixed stream keyed by the model id (`capability_offsets`). Both terms sum to 0 over a group, so
  the mean of a group's capability rates is v exactly; generators differ in which capabilities
  they are strong at, the complementarity a router exploits (METHOD 12). `mix` is calibrated so
  that the paper-scale router lands near Table 4 (`GENERATOR_SHAPE_MIX`); mix = 0 gives every
  generator the shared shape.
- Prompt effects (optional, `prompt_effect_sd`, default 0 = none): a logit offset e_ct ~ N(0, sd)
  per (concept, capability), shared by every generator and both languages, so a hard prompt is
  hard for everyone, as in real benchmarks (METHOD 16's subset estimators exploit it). A
  question's rate becomes sigmoid(logit r + e_ct) (for text: each target character's accuracy).
  Drawn from its own stream, and not drawn at all at sd 0, so a world without effects is
  byte-identical to one built before the option existed (planted.json names the sd only when
  it is not 0). The planted capability rates are then no longer the mean rate (Jensen).
- Text (Eq. 3): per rendered target each character is replaced, with probability 1 - a (a = the
  text rate), by a character of the same script that appears in none of the prompt's targets.
  The UTF-16 edit distance to the target is then exactly the replaced characters' UTF-16 length
  (a non-BMP character is replaced by a BMP one: 2 units), and no other assignment of blocks to
  targets is cheaper, so the expected micro-averaged text score is a. OCR noise that leaves the
  score unbiased: a spurious short block of foreign characters, shuffled block order, and a
  per-generator rate of `unavailable` transcriptions.
- Images: latency_s * gpus / megapixels has mean cost_gpu_s_per_mp from the generator seed, with
  mean-preserving lognormal noise.

Draws are vectorised per model and language over all questions, depth level by depth level.
Random streams: one for the world, and per generator (keyed by a CRC of its model id) one for its
OCR rate and one per language for its outcomes, so restricting `models` changes nothing of the
other generators' evidence. The judgments, most of the bundle, are written column-wise (the
contract's first five columns, as `write_bundle` writes them, about 4x faster; pyarrow directly for
Parquet); the optional judge columns are left out, which means judge `default`.

The package, in the order a run uses it: `vocabulary` (entities, attributes, relations,
semantics, text targets), `calibration` (the seeds, the calibrated rates, the scales), `world`
(prompts and their DSGs), `structure` (the flat structure both languages share), `outcomes`
(judgments, images, OCR readings), `writing` (the bundle's files, `planted.json`), `simulation`
(`SimulationConfig`, `simulate`) and `cli` (`python -m ingestion.sources.simulator`).
"""

from ingestion.sources.simulator.calibration import (
    CAPABILITY_SHAPE_SEED,
    DEFAULT_COUPLING,
    DEFAULT_SPREAD,
    DEMO_CONCEPTS,
    GENERATOR_SHAPE_MIX,
    LANGUAGES,
    MISSING_RATE,
    PAPER_CONCEPTS,
    SCALES,
    Rates,
    calibrated_rates,
    capability_offsets,
    load_generators,
    load_table2,
    load_taxonomy,
    parse_scale,
    shared_offsets,
)
from ingestion.sources.simulator.cli import main
from ingestion.sources.simulator.outcomes import (
    LATENCY_LOG_SIGMA,
    OCR_SPURIOUS_BLOCK_RATE,
    OCR_UNAVAILABLE_RANGE,
)
from ingestion.sources.simulator.simulation import SimulationConfig, SimulationSummary, simulate
from ingestion.sources.simulator.vocabulary import (
    ATTRIBUTES,
    ENTITIES,
    RELATIONS,
    SEMANTICS_GLOBAL,
    SEMANTICS_ON_ENTITY,
    TEXT_CAPABILITY,
    TEXT_CARRIER_CAPABILITY,
    TEXT_CARRIERS,
    TEXT_TARGETS,
)
from ingestion.sources.simulator.world import MAX_TARGETS_PER_PROMPT, SOURCES, SourceProfile
from method.bootstrap import rng_for  # the keyed stream every part draws from

__all__ = [
    "ATTRIBUTES",
    "CAPABILITY_SHAPE_SEED",
    "DEFAULT_COUPLING",
    "DEFAULT_SPREAD",
    "DEMO_CONCEPTS",
    "ENTITIES",
    "GENERATOR_SHAPE_MIX",
    "LANGUAGES",
    "LATENCY_LOG_SIGMA",
    "MAX_TARGETS_PER_PROMPT",
    "MISSING_RATE",
    "OCR_SPURIOUS_BLOCK_RATE",
    "OCR_UNAVAILABLE_RANGE",
    "PAPER_CONCEPTS",
    "RELATIONS",
    "SCALES",
    "SEMANTICS_GLOBAL",
    "SEMANTICS_ON_ENTITY",
    "SOURCES",
    "TEXT_CAPABILITY",
    "TEXT_CARRIERS",
    "TEXT_CARRIER_CAPABILITY",
    "TEXT_TARGETS",
    "Rates",
    "SimulationConfig",
    "SimulationSummary",
    "SourceProfile",
    "calibrated_rates",
    "capability_offsets",
    "load_generators",
    "load_table2",
    "load_taxonomy",
    "main",
    "parse_scale",
    "rng_for",
    "shared_offsets",
    "simulate",
]
