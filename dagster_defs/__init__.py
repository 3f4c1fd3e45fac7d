"""Dagster wiring: assets calling `ingestion/`, dbt assets, resources and jobs. Thin by design."""
