"""The QC-T2I application: the `qct2i` command, the printed report, `route` I/O and the one dbt
runner. It sits on top of `method`, `ingestion` and `dagster_defs`; nothing below imports it."""
