"""Per-image text statistics for Eq. 3: the optimal-assignment edit distance D and target length L.

A dbt Python model because minimum-cost assignment (Hungarian) has no natural SQL form; the
algorithm and the table live in `method.text_match` (`text_match_table`), where they are
unit-tested.
"""

from method.text_match import text_match_table


def model(dbt, session):
    dbt.config(materialized="table")
    images = dbt.ref("int_text_targets").to_arrow_table()
    return text_match_table(images)
