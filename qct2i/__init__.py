"""QC-T2I warehouse: the `qct2i` command and the scoring helpers that dbt Python models import."""
