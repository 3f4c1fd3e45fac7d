"""CPU throughput of the GPU ingestion code on tiny models built in code ("device": "cpu").

These are NOT GPU figures: they time the same loading and calling code (diffusers pipeline through
the generation driver, Qwen3-VL judge with one batch per image) on 32x32 images, 2 steps, hidden
size 32. The warehouse and bundle arguments are ignored.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

N_CONCEPTS = 8  # x 2 languages = 16 images
QUESTIONS_PER_IMAGE = 6


def measure(warehouse: Path, bundle: Path, work: Path) -> dict:
    import torch

    from ingestion.backends.api.generators import load_generator_specs
    from ingestion.backends.drivers.runs import run_adjudication, run_generation
    from ingestion.backends.models.diffusers_generator import DiffusersGenerator
    from ingestion.backends.models.transformers_vl import TransformersJudge
    from ingestion.backends.tiny.models import (
        TINY_SD_OVERRIDES,
        build_tiny_qwen3_vl,
        build_tiny_stable_diffusion,
    )

    torch.set_num_threads(2)
    work = Path(work) / "gpu_cpu"
    if work.exists():
        import shutil

        shutil.rmtree(work)
    gpu_bundle = work / "bundle"
    gpu_bundle.mkdir(parents=True)
    sd = build_tiny_stable_diffusion(work / "tiny_sd")
    vl = build_tiny_qwen3_vl(work / "tiny_vl")
    prompts = [
        {"prompt_id": f"c{i:03d}-{lang}", "concept_id": f"c{i:03d}", "language": lang, "text": text}
        for i in range(N_CONCEPTS)
        for lang, text in (("en", "a red cat on a chair"), ("zh", "椅子上的一只红猫"))
    ]
    with (gpu_bundle / "questions.jsonl").open("w") as f:
        for p in prompts:
            for q in range(QUESTIONS_PER_IMAGE):
                f.write(
                    json.dumps(
                        {
                            "prompt_id": p["prompt_id"],
                            "question_id": f"{p['prompt_id']}-q{q}",
                            "text": "Is there a cat?",
                        }
                    )
                    + "\n"
                )
    spec = load_generator_specs()["lens"].with_overrides(source=str(sd), **TINY_SD_OVERRIDES)
    generator = DiffusersGenerator(spec, device="cpu")
    start = time.perf_counter()
    gen = run_generation(spec, prompts, generator, gpu_bundle, batch_size=4, log=lambda _m: None)
    gen_wall = time.perf_counter() - start
    judge = TransformersJudge(str(vl), model_name="tiny-qwen3-vl", device="cpu")
    start = time.perf_counter()
    adj = run_adjudication(judge, gpu_bundle, "lens", log=lambda _m: None)
    adj_wall = time.perf_counter() - start
    return {
        "device": "cpu",
        "note": "tiny random-weight models (32x32, 2 steps, hidden 32): code-path throughput, "
        "not GPU figures",
        "images": gen.done,
        "images_per_s": gen.done / gen_wall,
        "device_s_per_mp": gen.gpu_s_per_mp,
        "questions": adj.questions,
        "questions_per_s": adj.questions / adj_wall,
    }


if __name__ == "__main__":
    print(json.dumps(measure(Path("."), Path("."), Path("bench/work")), indent=2))
