"""Per-image text statistics for Eq. 3: the optimal-assignment edit distance D and target length L.

A dbt Python model because minimum-cost assignment (Hungarian) has no natural SQL form; the
algorithm and the table live in `method.text_match` (`text_match_table`), where they are
unit-tested. Incremental by generator (docs/warehouse.md, "Incremental builds"): in an incremental
build (var `incremental_build`) the rows of the generators `qct2i build` does not rebuild are
copied from the last build's table and only the rebuilt generators' images are matched. A table,
not dbt's incremental materialisation, which dbt-duckdb merges for a Python model in a
transaction that cannot see the model's new rows.
"""

import pyarrow as pa

from method.dbt_vars import var_bool
from method.text_match import text_match_table

PENDING = "model_id in (select model_id from build_state.pending)"  # macro changed_generators


def model(dbt, session):
    dbt.config(materialized="table")
    images = dbt.ref("int_text_targets")
    if not var_bool(dbt.config.get("incremental_build")):
        return text_match_table(images.to_arrow_table())
    kept = session.sql(f"select * from {dbt.this} where not ({PENDING})").to_arrow_table()
    rebuilt = text_match_table(images.filter(PENDING).to_arrow_table())
    return pa.concat_tables([kept, rebuilt.cast(kept.schema)])
