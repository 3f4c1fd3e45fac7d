"""The GPU code location for many GPUs and nodes: the GPU assets on Dagster's Celery executor.

Each step becomes a Celery task: a generator x prompt-shard partition of `generated_images` on
the queue `gpu` (its `dagster-celery/queue` tag), other steps on Celery's `dagster`; a worker
started on a GPU node with one GPU visible and `-c 1` draws one shard at a time on its own
device. Broker and result backend: QCT2I_CELERY_BROKER (default
redis://localhost:6379/0), the same URL the workers are started with (`execution.config` of
their `-y` file). Coordinator and workers share one Dagster instance (DAGSTER_HOME: a shared
folder on one node, Postgres across nodes) and the bundle folder. Setup and the Kubernetes
variant: docs/distributed_generation.md. Needs the `distributed` extra (dagster-celery).
Like definitions.py, a factory (`@dg.definitions`): the seed, the shard count and the broker are
read when Dagster loads `defs()`, not at import.
"""

import os

import dagster as dg
from dagster_celery import celery_executor

from dagster_defs.assets.generation import GENERATED_IMAGES_KEY, generation_assets
from dagster_defs.ml_resources import ml_resources_from_env

BROKER_ENV = "QCT2I_CELERY_BROKER"
DEFAULT_BROKER = "redis://localhost:6379/0"

# A GPU worker holds one shard at a time: a task is acknowledged when it ends, not when it starts,
# so a busy worker (-c 1) reserves no second shard that an idle GPU could have drawn.
CELERY_SETTINGS = {"task_acks_late": True, "worker_prefetch_multiplier": 1}

generation_job = dg.define_asset_job(
    "gpu_generation",
    selection=dg.AssetSelection.assets(GENERATED_IMAGES_KEY),
    description="Draw one generator x prompt-shard partition on a Celery GPU worker.",
)


@dg.definitions
def defs() -> dg.Definitions:
    generation = generation_assets()
    broker = os.environ.get(BROKER_ENV, DEFAULT_BROKER)
    celery_gpu_executor = celery_executor.configured(
        {"broker": broker, "backend": broker, "config_source": CELERY_SETTINGS}, name="celery_gpu"
    )
    return dg.Definitions(
        assets=[generation.generated_images, generation.judged_images],
        jobs=[generation_job],
        resources=ml_resources_from_env(),
        executor=celery_gpu_executor,
    )
