"""Evidence in: bundle reading and validation, loading into DuckDB raw tables, and the simulator.

Plain Python, usable without Dagster or dbt. GPU libraries are imported only inside the backends
that need them, so importing this package never pulls in torch, diffusers, transformers or vllm.
"""
