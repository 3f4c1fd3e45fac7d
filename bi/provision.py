"""`make bi`: a local Superset over the published warehouse, its dashboard imported from the
repository (docs/bi.md).

Run by Superset's own environment (`.venv-superset`), so this file imports the standard library
only: it initialises Superset's SQLite metadata (bi/superset_config.py), creates the local login,
imports bi/superset/ (Superset's export format: the database, datasets on the marts, charts, the
dashboard) with the database's URI pointing at the published warehouse, read-only, and then
serves Superset on localhost, printing its URL and login first. `--no-serve` stops before serving.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "bi" / "superset"
LOGIN = ("admin", "admin")  # a local instance on 127.0.0.1 only
URI_PLACEHOLDER = "duckdb:///WAREHOUSE?access_mode=read_only"


def published_warehouse() -> Path:
    """QCT2I_WAREHOUSE as the project resolves it (relative paths from the project root)."""
    configured = Path(os.environ.get("QCT2I_WAREHOUSE", "warehouse/qct2i.duckdb"))
    return configured if configured.is_absolute() else ROOT / configured


def superset(*args: str, env: dict) -> None:
    command = [str(Path(sys.executable).with_name("superset")), *args]
    subprocess.run(command, env=env, check=True)


def bundle_zip(warehouse: Path) -> bytes:
    """bi/superset/ as the zip `superset import-dashboards` reads (every file under one folder),
    the database's URI naming `warehouse`, read-only (DuckDB's access mode, via duckdb-engine)."""
    uri = f"duckdb:///{warehouse}?access_mode=read_only"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for path in sorted(BUNDLE.rglob("*.yaml")):
            text = path.read_text(encoding="utf-8").replace(URI_PLACEHOLDER, uri)
            archive.writestr(f"qct2i_dashboard/{path.relative_to(BUNDLE)}", text)
    return out.getvalue()


def provision(env: dict, warehouse: Path) -> None:
    superset("db", "upgrade", env=env)
    user, password = LOGIN
    superset(
        "fab", "create-admin", "--username", user, "--password", password,
        "--firstname", "QC-T2I", "--lastname", "local", "--email", "admin@localhost",
        env=env,
    )  # fmt: skip
    superset("init", env=env)
    archive = Path(env["QCT2I_SUPERSET_HOME"]) / "qct2i_dashboard.zip"
    archive.write_bytes(bundle_zip(warehouse))
    superset("import-dashboards", "--path", str(archive), "--username", user, env=env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("SUPERSET_PORT", "8088")))
    parser.add_argument("--no-serve", action="store_true", help="provision, then stop")
    args = parser.parse_args()
    warehouse = published_warehouse()
    if not warehouse.exists():
        print(f"{warehouse}: no published warehouse yet; run `make demo` first", file=sys.stderr)
        return 2
    home = Path(os.environ.get("QCT2I_SUPERSET_HOME", ROOT / ".superset_home"))
    home.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "QCT2I_SUPERSET_HOME": str(home),
        "SUPERSET_CONFIG_PATH": str(ROOT / "bi" / "superset_config.py"),
        "FLASK_APP": "superset",
    }
    provision(env, warehouse)
    user, password = LOGIN
    url = f"http://127.0.0.1:{args.port}/superset/dashboard/qct2i/"
    print(f"Superset: {url}  login {user} / {password}  (warehouse {warehouse}, read-only)")
    if args.no_serve:
        return 0
    sys.stdout.flush()
    superset("run", "--host", "127.0.0.1", "--port", str(args.port), "--with-threads", env=env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
