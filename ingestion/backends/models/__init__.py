"""The backend implementations: each module imports its heavy library (torch, diffusers,
transformers, vllm) and is reached only through `ingestion.backends.api.registry`."""
