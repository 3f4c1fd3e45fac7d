"""Read, validate and load an evidence bundle (CONTRACTS.md, "The evidence bundle").

A bundle is refused as a whole, with every problem listed at once, or accepted as a whole: nothing
of a refused bundle reaches the warehouse. Validation runs in three layers, each on whatever the
previous layer could read, so one run reports everything that can be known:

0. a release's manifest (`manifest.json`, `ingestion.bundle.manifest`), when the bundle has one:
   a file changed, missing or not listed refuses the bundle before anything is read;
1. files: a required table's file missing, a table present in both formats, a folder where a file
   should be, an unreadable file (a truncated or corrupt Parquet file, text that is not UTF-8);
2. shapes, row by row: malformed JSON lines (a key repeated within one object, a line over
   16 MiB), values of the wrong type, missing values in non-nullable columns, empty or unsafe
   identifiers (`bundle_format.is_safe_id`: ids may name files), non-finite numbers, null
   elements in lists;
3. meaning: duplicate keys (each table's `TableSpec.key`), references to unknown
   prompts/questions/generators/capabilities, parents outside the prompt, self-parents and cycles,
   out-of-domain values (language, answer, p_yes, status, sizes, latency, cost), image paths
   that lead outside the bundle folder and the named image roots (`ingestion.bundle.image_paths`,
   symbolic links followed).

docs/refusals.md ("What the importer refuses") lists every class with its message.

A check that looks rows up in another table runs only if that table was read completely, so a bad
line is reported once rather than echoed by every row that refers to it.

Leniencies, chosen so that files written by other tools load as well as our own:
- columns the contract does not know are ignored (they never reach the warehouse);
- a nullable column may be left out (a missing JSONL key, a missing Parquet column): it reads as
  null, or as the column's default where it has one (a judgment naming no `judge_id` is judge
  `default`);
- a UTF-8 byte order mark at the start of a JSONL file is dropped, and CRLF line ends read as LF;
- an answer that is `yes` or `no` up to case and surrounding white space (`"Yes"`, `" NO "`: VLM
  judges print capitals) is stored as `yes` / `no`; any other string (`"1"`, `"true"`, `"y"`,
  `""`) is refused, never guessed;
- an optional table's file without rows is the same as an absent one.

JSONL is read through pyarrow's vectorised reader when a cheap pre-screen says the reader can be
trusted with the file (it reads a bare `null` line as a row and can crash on some non-object lines);
any doubt, or any error, sends the file through the per-line Python reader, which locates problems.
"""

from ingestion.bundle.load import (
    default_capabilities,
    load_bundle,
    read_bundle,
    read_questions_file,
)
from ingestion.bundle.problems import LINE, BundleError, Problem

__all__ = [
    "LINE",
    "BundleError",
    "Problem",
    "default_capabilities",
    "load_bundle",
    "read_bundle",
    "read_questions_file",
]
