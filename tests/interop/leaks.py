"""The leak search's records for the Python stages (interop, bridge), as the end-to-end suite
keeps them (tests/e2e/support/leaks.rs): with GRANTRY_LEAK_DIR set (scripts/test sets it),
every secret a test meets is appended to `secrets.txt` there and every grantry log (at trace
level) is written beside it, for `tests/leak_scan` to search the one for the other. Without
the variable nothing is written."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

# Query parameters whose values are secrets wherever they travel.
SECRET_PARAMETERS = {"code", "state", "requestState", "code_verifier", "access_token", "refresh_token"}


def folder() -> Path | None:
    named = os.environ.get("GRANTRY_LEAK_DIR")
    return Path(named) if named else None


def record(kind: str, values) -> None:
    """Remembers secret values (`kind` says what they are) for the final search."""
    where = folder()
    if where is None:
        return
    where.mkdir(parents=True, exist_ok=True)
    with open(where / "secrets.txt", "a") as file:
        for value in values:
            # Short values could match by chance; every real secret here is far longer.
            if value and len(value) >= 12 and "\n" not in value and "\t" not in value:
                file.write(f"{kind}\t{value}\n")


def record_url(url: str) -> None:
    """The secrets a URL carries: a connect link's sealed ticket, codes, states, tokens."""
    parts = urlsplit(url)
    if "/connect/" in parts.path:
        record("connect ticket", [parts.path.rsplit("/connect/", 1)[1]])
    record("url parameter", [v for k, v in parse_qsl(parts.query) if k in SECRET_PARAMETERS])


def log_path(stage: str) -> Path | None:
    """Where a grantry started by `stage` logs, kept for the search (None: not searching)."""
    where = folder()
    if where is None:
        return None
    where.mkdir(parents=True, exist_ok=True)
    return where / f"grantry-{stage}-{secrets.token_hex(8)}.log"


def trace_env() -> dict[str, str]:
    """The environment a grantry needs for the search: every log line, at trace level."""
    return {"GRANTRY_LOG": "trace"} if folder() else {}
