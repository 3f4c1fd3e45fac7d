"""`ingestion.paths.duckdb_config`: the Python side's DuckDB memory limit is the dbt profile's.

The default lives twice, in profiles.yml's `env_var('QCT2I_DUCKDB_MEMORY_LIMIT', ...)` (dbt reads
no Python) and in `DEFAULT_DUCKDB_MEMORY_LIMIT`; this test keeps the two the same, so the
fingerprints and the export cannot spill later (or run out of memory sooner) than a build."""

from __future__ import annotations

import re

from ingestion.paths import DEFAULT_DUCKDB_MEMORY_LIMIT, PROJECT_ROOT, duckdb_config

PROFILE_DEFAULT = re.compile(r"env_var\('QCT2I_DUCKDB_MEMORY_LIMIT', '([^']+)'\)")


def test_the_default_is_the_dbt_profiles():
    profile = (PROJECT_ROOT / "profiles.yml").read_text(encoding="utf-8")
    defaults = PROFILE_DEFAULT.findall(profile)
    assert defaults == [DEFAULT_DUCKDB_MEMORY_LIMIT] == ["8GB"]


def test_the_environment_sets_it_as_it_sets_the_profiles_and_unset_it_is_the_default(monkeypatch):
    monkeypatch.setenv("QCT2I_DUCKDB_MEMORY_LIMIT", "300MB")
    assert duckdb_config() == {"memory_limit": "300MB"}
    monkeypatch.delenv("QCT2I_DUCKDB_MEMORY_LIMIT")
    assert duckdb_config() == {"memory_limit": "8GB"}
