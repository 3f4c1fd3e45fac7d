"""`python -m ingestion.sources.simulator --out DIR ...` (`ingestion.sources.simulator.cli`)."""

import sys

from ingestion.sources.simulator.cli import main

if __name__ == "__main__":
    sys.exit(main())
