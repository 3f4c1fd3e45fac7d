"""Evidence in, in four parts (README, "Module map"; each part's allowed imports are an
import-linter contract in pyproject.toml):

- `ingestion.bundle`: the evidence bundle, its format, validation, loading into the raw tables,
  append imports and release manifests;
- `ingestion.store`: the published warehouse, its working copy and the writer lock;
- `ingestion.sources`: evidence made or converted here, the simulator and the release converters;
- `ingestion.backends`: the model backends (interfaces in `api`, implementations in `models`,
  resumable runs in `drivers`, tiny test models in `tiny`).

Plain Python, usable without Dagster or dbt. GPU libraries are imported only inside the backend
implementations that need them, so importing this package never pulls in torch, diffusers,
transformers or vllm.
"""
