"""The QC-T2I method library: the paper's estimators on arrays (numpy, scipy, pyarrow, networkx).

dbt Python models, the simulator, the benches and the application import it; it imports none of
them, nor DuckDB, dbt or Dagster (an import-linter contract in `make lint` holds this).
"""
