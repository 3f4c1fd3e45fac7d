"""Per-image text statistics for Eq. 3: the optimal-assignment edit distance D and target length L.

A dbt Python model because minimum-cost assignment (Hungarian) has no natural SQL form; the
algorithm lives in `method.text_match`, where it is unit-tested.
"""

import pyarrow as pa

from method.text_match import match_text, utf16_length


def model(dbt, session):
    dbt.config(materialized="table")
    images = dbt.ref("int_text_targets").to_arrow_table().to_pylist()
    rows = []
    for image in images:
        is_ok = image["transcription_status"] == "ok"
        targets = image["text_targets"]
        match = match_text(targets, image["text_blocks"] or []) if is_ok else None
        rows.append(
            {
                "model_id": image["model_id"],
                "prompt_id": image["prompt_id"],
                "transcription_status": image["transcription_status"],
                "n_targets": len(targets),
                "n_blocks": len(image["text_blocks"] or []),
                "target_length_utf16": sum(utf16_length(t) for t in targets),
                "edit_distance_utf16": match.distance_utf16 if match else None,
            }
        )
    schema = pa.schema(
        [
            ("model_id", pa.string()),
            ("prompt_id", pa.string()),
            ("transcription_status", pa.string()),
            ("n_targets", pa.int64()),
            ("n_blocks", pa.int64()),
            ("target_length_utf16", pa.int64()),
            ("edit_distance_utf16", pa.int64()),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)
