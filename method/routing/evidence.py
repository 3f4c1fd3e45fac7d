"""Request-level evidence and the out-of-fold evaluation of the routers (METHOD 12).

`Evidence` holds every generator's request-level sufficient statistics (from
int_router_request_evidence) as dense arrays; a request is predicted only from folds other than
its own (`out_of_fold_predictions`), and Q-Profile-C's epsilon is chosen on nested inner folds
(`select_epsilon`), so no request's own judgments reach its decision.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from method.bootstrap import encode
from method.routing.predict import TIE_TOLERANCE, choose, cost_ranks, hcq_frac, predict_quality
from method.scores import bilingual_mean, capability_score
from method.taxonomy import Taxonomy

# METHOD 12: the epsilon grid (fractions of HCQ, i.e. 0 to 10 points in 0.5-point steps).
EPS_GRID: tuple[float, ...] = tuple(round(0.005 * i, 3) for i in range(21))
N_FOLDS = 5
UNIFORM_DRAWS = 100


# The columns of int_router_request_evidence that `Evidence.from_arrow` reads: the router's dbt
# models project them (the table has twice as many, gigabytes at 10x paper scale).
EVIDENCE_COLUMNS = ("model_id", "prompt_id", "capability", "score_num", "score_den")


@dataclass
class Evidence:
    """Request-level sufficient statistics of every generator (dense arrays).

    num/den (M, P, T): per generator, request and capability the score's numerator and
    denominator (valid yes / valid questions; for the transcription capability L - D / L of the
    request's image). `active` (P, T): the capabilities the request's questions carry.
    """

    taxonomy: Taxonomy
    models: tuple[str, ...]
    cost: np.ndarray  # (M,) GPU-s/MP
    prompts: tuple[str, ...]
    concepts: tuple[str, ...]
    concept: np.ndarray  # (P,) index into concepts
    languages: tuple[str, ...]
    language: np.ndarray  # (P,) index into languages
    fold: np.ndarray  # (P,) 1..N_FOLDS
    num: np.ndarray
    den: np.ndarray
    active: np.ndarray

    @property
    def cost_rank(self) -> np.ndarray:
        return cost_ranks(self.cost, self.models)

    @classmethod
    def from_arrow(
        cls,
        evidence: pa.Table,
        requests: pa.Table,
        capabilities: pa.Table,
        generators: pa.Table,
    ) -> Evidence:
        """From `int_router_request_evidence` (model_id, prompt_id, capability, score_num,
        score_den), `int_router_requests` (prompt_id, concept_id, language, fold), the taxonomy
        seed and `int_generators` (model_id, cost_gpu_s_per_mp)."""
        taxonomy = Taxonomy.from_rows(capabilities.to_pylist())
        req = requests.sort_by("prompt_id").to_pydict()
        prompts = tuple(req["prompt_id"])
        concepts = tuple(sorted(set(req["concept_id"])))
        languages = tuple(sorted(set(req["language"])))
        models = tuple(sorted(pc.unique(evidence["model_id"]).to_pylist()))
        cost_of = dict(
            zip(
                generators["model_id"].to_pylist(),
                generators["cost_gpu_s_per_mp"].to_pylist(),
                strict=True,
            )
        )
        m_idx = encode(evidence["model_id"], models)[1]
        p_idx = encode(evidence["prompt_id"], prompts)[1]
        t_idx = encode(evidence["capability"], taxonomy.capabilities)[1]
        shape = (len(models), len(prompts), len(taxonomy.capabilities))
        num, den = np.zeros(shape), np.zeros(shape)
        num[m_idx, p_idx, t_idx] = evidence["score_num"].to_numpy(zero_copy_only=False)
        den[m_idx, p_idx, t_idx] = evidence["score_den"].to_numpy(zero_copy_only=False)
        active = np.zeros(shape[1:], dtype=bool)
        active[p_idx, t_idx] = True
        return cls(
            taxonomy=taxonomy,
            models=models,
            # a generator without any cost figure sorts last and makes mean costs infinite
            cost=np.array(
                [np.inf if cost_of.get(m) is None else float(cost_of[m]) for m in models]
            ),
            prompts=prompts,
            concepts=concepts,
            concept=encode(pa.chunked_array([req["concept_id"]]), concepts)[1],
            languages=languages,
            language=encode(pa.chunked_array([req["language"]]), languages)[1],
            fold=np.array(req["fold"], dtype=np.int64),
            num=num,
            den=den,
            active=active,
        )

    def fold_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """(F+1, M, L, T) numerator and denominator sums per fold (index 0 unused) and language."""
        n_caps = len(self.taxonomy.capabilities)
        shape = (N_FOLDS + 1, len(self.models), len(self.languages), n_caps)
        num, den = np.zeros(shape), np.zeros(shape)
        for f in range(1, N_FOLDS + 1):
            for li in range(len(self.languages)):
                mask = (self.fold == f) & (self.language == li)
                num[f, :, li] = self.num[:, mask].sum(axis=1)
                den[f, :, li] = self.den[:, mask].sum(axis=1)
        return num, den

    def predict(self, excluded_folds: Sequence[int], requests: np.ndarray) -> np.ndarray:
        """(len(requests), M) Q-Profile predictions from the folds not in `excluded_folds`."""
        num_f, den_f = self.sums_by_fold
        keep = [f for f in range(1, N_FOLDS + 1) if f not in excluded_folds]
        profile = capability_score(num_f[keep].sum(axis=0), den_f[keep].sum(axis=0))  # (M, L, T)
        out = np.full((len(requests), len(self.models)), np.nan)
        for li in range(len(self.languages)):
            rows = np.flatnonzero(self.language[requests] == li)
            if len(rows):
                active = self.active[requests[rows]]
                out[rows] = predict_quality(profile[:, li], active, self.taxonomy)
        return out

    @cached_property
    def sums_by_fold(self) -> tuple[np.ndarray, np.ndarray]:
        return self.fold_sums()

    def routed_quality(self, choice: np.ndarray, requests: np.ndarray) -> np.ndarray:
        """(L,) HCQ per language of the virtual generator whose records for request
        `requests[i]` are generator `choice[i]`'s records; NaN for a language without requests."""
        num = self.num[choice, requests]  # (R, T)
        den = self.den[choice, requests]
        out = np.full(len(self.languages), np.nan)
        for li in range(len(self.languages)):
            mask = self.language[requests] == li
            if mask.any():
                scores = capability_score(num[mask].sum(axis=0), den[mask].sum(axis=0))
                out[li] = hcq_frac(scores, np.ones_like(scores, dtype=bool), self.taxonomy)
        return out

    def realised_quality(self) -> np.ndarray:
        """(P, M) HCQ of each generator's own records on each request alone (the oracle's view)."""
        scores = capability_score(self.num, self.den)  # (M, P, T)
        return hcq_frac(scores, self.active[None], self.taxonomy).T


def language_mean(per_language: np.ndarray) -> np.ndarray:
    """The equal-weight mean over the last (language) axis: with two languages the bilingual
    50/50 mean (`method.scores.bilingual_mean`), NaN unless both are defined."""
    if per_language.shape[-1] == 2:
        return bilingual_mean(per_language[..., 0], per_language[..., 1])
    return per_language.mean(axis=-1)


def selection_quality(per_language: np.ndarray) -> float:
    """The figure epsilon is selected on: the 50/50 (equal-weight) mean over languages."""
    return float(language_mean(per_language))


@dataclass(frozen=True)
class EpsilonSearch:
    """One outer fold's inner-fold search: routed quality per grid epsilon and the chosen one."""

    outer_fold: int
    grid_quality: tuple[float, ...]  # inner-fold selection quality of Q-Profile-C per EPS_GRID
    best_fixed_quality: float
    best_fixed_model: str
    eps: float


def select_epsilon(ev: Evidence, outer_fold: int) -> EpsilonSearch:
    """METHOD 12: on the training folds of `outer_fold`, each inner fold (one of the other four
    folds) is predicted from the remaining three; epsilon is the largest grid value whose routed
    quality over the training requests is not below the best fixed generator's quality there.
    If none clears it (or the fold has no training requests), eps = 0 (Q-Profile-Q)."""
    training = np.flatnonzero(ev.fold != outer_fold)
    predicted = np.full((len(training), len(ev.models)), np.nan)
    for inner in range(1, N_FOLDS + 1):
        if inner == outer_fold:
            continue
        rows = np.flatnonzero(ev.fold[training] == inner)
        if len(rows):
            predicted[rows] = ev.predict((outer_fold, inner), training[rows])
    fixed = [
        selection_quality(ev.routed_quality(np.full(len(training), m), training))
        for m in range(len(ev.models))
    ]
    best = int(np.nanargmax(fixed)) if not np.isnan(fixed).all() else 0
    grid, eps = [], 0.0
    for value in EPS_GRID:
        choice = choose(predicted, ev.cost_rank, value)
        quality = selection_quality(ev.routed_quality(choice, training))
        grid.append(quality)
        if quality >= fixed[best] - TIE_TOLERANCE:
            eps = value
    return EpsilonSearch(outer_fold, tuple(grid), fixed[best], ev.models[best], eps)


def out_of_fold_predictions(ev: Evidence) -> np.ndarray:
    """(P, M): each request predicted from the four folds other than its own."""
    out = np.full((len(ev.prompts), len(ev.models)), np.nan)
    for fold in range(1, N_FOLDS + 1):
        rows = np.flatnonzero(ev.fold == fold)
        if len(rows):
            out[rows] = ev.predict((fold,), rows)
    return out


def uniform_draws(n_models: int, n_requests: int, seed: int, draws: int = UNIFORM_DRAWS):
    """(draws, P) generator index per draw and request, uniform, from a fixed seed."""
    return np.random.default_rng(seed).integers(0, n_models, size=(draws, n_requests))
