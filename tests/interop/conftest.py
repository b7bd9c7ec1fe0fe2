"""Fixtures: a fresh grantry (the real binary, demo provider, SQLite in a temp dir) per test,
and a scripted browser that signs in through grantry's connect page and the demo provider."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

import httpx2
import pytest

import leaks

BINARY = os.environ.get("GRANTRY_BIN", str(Path(__file__).resolve().parents[2] / "target/debug/grantry"))


def free_port() -> int:
    """A port free when picked, and only then: whatever binds it must check it got it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# What grantry logs once it listens: a start waits for it in the log of the process it began,
# so another test's server on the same port is never taken for this one.
LISTENING = "grantry is listening"
# That line whatever GRANTRY_LOG says (the agents stage quiets grantry with `warn`): the
# directive enables that event alone, the one with this field.
_LISTENING_DIRECTIVE = "grantry::program[{max_connections_per_address}]=info"


def announcing(env: dict[str, str]) -> dict[str, str]:
    """`env` with GRANTRY_LOG (or RUST_LOG, else grantry's default, which has it) letting the
    line grantry logs once it listens through."""
    level = env.get("GRANTRY_LOG") or env.get("RUST_LOG")
    return {**env, "GRANTRY_LOG": f"{level},{_LISTENING_DIRECTIVE}"} if level else env


class Grantry:
    def __init__(self, extra_args: list[str], port: int | None = None, env: dict[str, str] | None = None):
        env = announcing({
            **{k: v for k, v in os.environ.items() if k != "GRANTRY_KEYS"},
            **leaks.trace_env(),
            **(env or {}),
        })
        # A free port is free only when picked: when another process binds it first, grantry
        # exits naming the address, and starts again on a new port (a port the caller chose is
        # kept, and the start fails).
        attempts = 5
        for attempt in range(1, attempts + 1):
            self._launch(extra_args, port or free_port(), env)
            if self._listening():
                break
            log = self.log()
            self.stop()
            if port is not None or attempt == attempts or "cannot listen on" not in log:
                raise RuntimeError(f"grantry did not start:\n{log}")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if httpx2.get(f"{self.base}/healthz", timeout=1).status_code == 200:
                    return
            except httpx2.HTTPError:
                time.sleep(0.05)
        log = self.log()
        self.stop()
        raise RuntimeError(f"grantry did not start:\n{log}")

    def _launch(self, extra_args: list[str], port: int, env: dict[str, str]) -> None:
        """Starts grantry on `port`; "{port}" in an argument is that port."""
        self.data_dir = tempfile.TemporaryDirectory()
        self.port = port
        self.base = f"http://127.0.0.1:{self.port}"
        # Kept for the leak search when it runs (at trace level), else beside the data.
        self.log_path = leaks.log_path("interop") or Path(self.data_dir.name) / "grantry.log"
        self.log_file = open(self.log_path, "w")
        args = [arg.replace("{port}", str(port)) for arg in extra_args]
        self.process = subprocess.Popen(
            [BINARY, "--listen", f"127.0.0.1:{self.port}", "--data-dir", self.data_dir.name, *args],
            stdout=subprocess.DEVNULL,
            stderr=self.log_file,
            env=env,
        )

    def _listening(self) -> bool:
        """Whether the process started says it listens (within 10 s), and still runs."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            if LISTENING in self.log():
                return True
            time.sleep(0.05)
        return False

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log_file.close()
        self.data_dir.cleanup()


# Trace-level chatter of the HTTP and SQL libraries, left out of a failure's report.
_CHATTER = re.compile(r" (hyper|hyper_util|reqwest|h2|rustls|sqlx|tower|mio)::")


def tail(text: str, lines: int = 40) -> str:
    """The warnings and errors of a log, then its last `lines` lines (library chatter left out)."""
    all_lines = [line for line in text.splitlines() if not _CHATTER.search(line)]
    flagged = [line for line in all_lines if " WARN " in line or " ERROR " in line]
    return "\n".join(["-- warnings and errors:", *flagged[-lines:], "-- last lines:", *all_lines[-lines:]])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failing test's report carries what its servers logged, and whatever its module's
    `failure_sections(item)` adds: a failure in CI is read from its output alone."""
    report = yield
    if report.when == "call" and report.failed:
        for name, value in item.funcargs.items():
            if isinstance(value, Grantry) and value.log_path.exists():
                report.sections.append((f"grantry log ({name})", tail(value.log())))
        sections = getattr(item.module, "failure_sections", None)
        if sections:
            report.sections.extend(sections(item))
    return report


@pytest.fixture
def grantry():
    server = Grantry([])
    yield server
    server.stop()


@pytest.fixture
def grantry_short_hold():
    server = Grantry(["--retry-hold", "1"])
    yield server
    server.stop()


class _Forms(HTMLParser):
    """Collects the first form of a page: its action and its named inputs."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self._in_form = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = a.get("action", "")
            self._in_form = True
        elif tag == "input" and self._in_form and a.get("name"):
            self.fields[a["name"]] = a.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self._in_form = False


def first_form(response: httpx2.Response) -> tuple[str, dict[str, str]]:
    parser = _Forms()
    parser.feed(response.text)
    assert parser.action is not None, f"no form on {response.url}: {response.text[:300]}"
    return str(response.url.join(parser.action)), parser.fields


async def sign_in(link: str, approve: bool = True, user: str | None = None) -> httpx2.Response:
    """Opens the connect link like a person: Continue, then Approve (or Deny) at the provider,
    as the demo user `user` when given (each name is an account of its own). Returns the last
    page, after every redirect was followed. Every secret on the way (the link's ticket, codes,
    states, cookies) is kept for the leak search."""
    leaks.record_url(link)
    async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as browser:
        connect = await browser.get(link)
        assert connect.status_code == 200, connect.text
        action, fields = first_form(connect)
        consent = await browser.post(action, data=fields)
        assert consent.status_code == 200 and "Authorize" in consent.text, consent.text
        action, fields = first_form(consent)
        fields["decision"] = "approve" if approve else "deny"
        if user is not None:
            fields["user"] = user
        final = await browser.post(action, data=fields)
        for seen in [*consent.history, consent, *final.history, final]:
            leaks.record_url(str(seen.url))
        leaks.record("cookie", [cookie.value for cookie in browser.cookies.jar])
        assert re.search(r"/(connected|oauth/callback)", str(final.url)), final.url
        return final


def assert_connected(final: httpx2.Response) -> None:
    """The sign-in ended on grantry's "Account connected" page, and on nothing else (a refusal
    page such as "Account not connected" also says "connected")."""
    assert final.status_code == 200, final.text
    assert "/connected?provider=" in str(final.url), f"ended on {final.url}: {final.text[:300]}"
    assert "<title>Account connected" in final.text, final.text[:300]
    assert "account is connected. Return to your assistant" in final.text, final.text[:300]
