"""What an append leaves in the warehouse besides its rows (`ingestion.bundle.append._append`):
the import log gains an `append` row per changing append (never restarted), a table that gained
rows is stored sorted again, and a refusal keeps the folder. Holes `make mutation` found
(issue 36) against the append tests under 1.2 s; bundles from tests/worlds/good_bundle.py,
expected values by hand."""

from __future__ import annotations

import duckdb
import pytest

from ingestion.bundle import BundleError
from ingestion.bundle.append import append_bundle
from tests.worlds.good_bundle import TAXONOMY, good, write


def test_two_appends_log_two_append_rows_and_keep_generators_sorted(tmp_path):
    """Guards the log (mode `append`, not restarted by the second append: two rows, the second
    adding one generator) and the re-sort of a table that only gained rows (`m0` appended
    after m1 and m2 is stored first)."""
    warehouse = tmp_path / "w.duckdb"
    append_bundle(write(tmp_path / "first", good()), warehouse, capabilities=TAXONOMY)
    second = good()
    second["generators"].append({"model_id": "m0", "display_name": "Model Zero"})
    append_bundle(write(tmp_path / "second", second), warehouse, capabilities=TAXONOMY)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        log = con.execute(
            "SELECT mode, n_generators, n_judgments FROM raw.bundle_imports ORDER BY imported_at"
        ).fetchall()
        generators = [
            row[0] for row in con.execute("SELECT model_id FROM raw.generators").fetchall()
        ]
    assert log == [("append", 2, 9), ("append", 1, 0)]
    assert generators == ["m0", "m1", "m2"]


def test_a_contradicting_append_is_refused_with_its_folder(tmp_path):
    """Guards the refusal's folder: the bundle that contradicts the stored rows is named."""
    warehouse = tmp_path / "w.duckdb"
    append_bundle(write(tmp_path / "first", good()), warehouse, capabilities=TAXONOMY)
    changed = good()
    changed["generators"][0]["display_name"] = "Another Name"
    folder = write(tmp_path / "second", changed)
    with pytest.raises(BundleError) as refused:
        append_bundle(folder, warehouse, capabilities=TAXONOMY)
    assert refused.value.folder == folder
    assert [(p.file, p.line) for p in refused.value.problems] == [("generators.jsonl", 1)]
