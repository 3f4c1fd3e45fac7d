"""Superset's configuration for `make bi` (bi/provision.py): a local instance whose own metadata
is a SQLite file under QCT2I_SUPERSET_HOME (default `.superset_home/`), its secret key generated
there on first use. The warehouse it reads is registered read-only by the import (docs/bi.md)."""

import os
import secrets
from pathlib import Path

HOME = Path(
    os.environ.get("QCT2I_SUPERSET_HOME", Path(__file__).resolve().parent.parent / ".superset_home")
)
HOME.mkdir(parents=True, exist_ok=True)
_KEY = HOME / "secret_key"
if not _KEY.exists():
    _KEY.write_text(secrets.token_urlsafe(42))
    _KEY.chmod(0o600)
SECRET_KEY = _KEY.read_text().strip()
SQLALCHEMY_DATABASE_URI = f"sqlite:///{HOME / 'superset.db'}"
# a local, single-user instance: no example data, no telemetry
SUPERSET_LOAD_EXAMPLES = False
