"""Cross-prompt root controls (Eq. 6, METHOD 8, Figure 2 right) per model x language.

Over the eligible contexts of int_root_contexts (leave-one-prompt-out baseline computed there):
mean local root survival, mean baseline and their difference in points, with a 95% percentile
interval of the difference from a bootstrap over prompts (a prompt's contexts travel together).
A dbt Python model for the vectorised bootstrap in `method.structure`.
"""

import pyarrow as pa
import pyarrow.compute as pc

from method.structure import prompt_bootstrap

POINTS = 100.0


def model(dbt, session):
    dbt.config(materialized="table")
    draws = int(dbt.config.get("bootstrap_draws"))
    seed = int(dbt.config.get("bootstrap_seed"))
    contexts = dbt.ref("int_root_contexts").to_arrow_table()
    contexts = contexts.filter(pc.equal(contexts["is_eligible"], True))
    local = pc.cast(contexts["local_survival"], pa.float64())
    contexts = contexts.append_column("diff", pc.subtract(local, contexts["baseline_survival"]))
    rows = prompt_bootstrap(
        contexts,
        split_by=["language"],
        cell_by=["model_id"],
        unit="prompt_id",
        numerator="diff",
        denominator=None,
        draws=draws,
        seed=seed,
    )
    means = {}
    for row in (
        contexts.group_by(["model_id", "language"])
        .aggregate([("local_survival", "mean"), ("baseline_survival", "mean"), ("diff", "count")])
        .to_pylist()
    ):
        means[row["model_id"], row["language"]] = row
    out = {
        "model_id": [],
        "language": [],
        "n_contexts": [],
        "n_prompts": [],
        "local_survival": [],
        "baseline_survival": [],
        "diff": [],
        "ci_lo": [],
        "ci_hi": [],
        "n_draws": [],
    }
    for r in rows:
        m = means[r["model_id"], r["language"]]
        out["model_id"].append(r["model_id"])
        out["language"].append(r["language"])
        out["n_contexts"].append(m["diff_count"])
        out["n_prompts"].append(r["n_units"])
        out["local_survival"].append(m["local_survival_mean"] * POINTS)
        out["baseline_survival"].append(m["baseline_survival_mean"] * POINTS)
        out["diff"].append(r["estimate"] * POINTS)
        out["ci_lo"].append(None if r["ci_lo"] is None else r["ci_lo"] * POINTS)
        out["ci_hi"].append(None if r["ci_hi"] is None else r["ci_hi"] * POINTS)
        out["n_draws"].append(draws)
    schema = pa.schema(
        [
            ("model_id", pa.string()),
            ("language", pa.string()),
            ("n_contexts", pa.int64()),
            ("n_prompts", pa.int64()),
            ("local_survival", pa.float64()),
            ("baseline_survival", pa.float64()),
            ("diff", pa.float64()),
            ("ci_lo", pa.float64()),
            ("ci_hi", pa.float64()),
            ("n_draws", pa.int64()),
        ]
    )
    return pa.Table.from_pydict(out, schema=schema)
