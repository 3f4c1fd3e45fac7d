"""Definitions: the pipeline (`dagster_defs.pipeline`: simulator / GPU bundle -> raw tables ->
staging -> intermediate -> marts -> report, and its jobs `demo` and `import_and_build`) with the
jobs that start it: `evaluate_generator` (`dagster_defs.evaluation`) and `inbox_intake`, with the
`inbox` sensor that starts those (`dagster_defs.inbox`), and the sensors by which the GPU chain
runs itself (`dagster_defs.gpu_chain`: judging and reading follow generation, import and build
follow them).

Built by a factory (`@dg.definitions`), so importing this module does no work: Dagster (`dagster
dev`, `dagster asset materialize`, a run worker), the CLI demo and the tests call `defs()`, which
builds the GPU assets from the generator seed and QCT2I_GENERATION_SHARDS, prepares the dbt project
(a parse only when its manifest is stale) and reads the manifest.
"""

import dagster as dg

from dagster_defs.evaluation import evaluate_generator_job
from dagster_defs.gpu_chain import gpu_chain_sensors
from dagster_defs.inbox import inbox_intake_job, inbox_sensor
from dagster_defs.pipeline import pipeline_definitions


@dg.definitions
def defs() -> dg.Definitions:
    return pipeline_definitions(
        jobs=[evaluate_generator_job, inbox_intake_job],
        sensors=[inbox_sensor(), *gpu_chain_sensors()],
    )
