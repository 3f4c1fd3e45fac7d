"""The warehouse store: the published DuckDB file readers open, the working copy writers build in,
and the writer lock that makes imports and builds take turns (`ingestion.store.warehouse`)."""
