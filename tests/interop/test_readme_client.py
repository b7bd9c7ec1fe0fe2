"""The README's first client, as written: its Python block is taken from README.md ("The first
client") when the test runs, with only the server URL swapped for the test grantry's, and run as
a program whose terminal the test plays: it reads what the client prints and types the person's
answers. With one account it shows a sign-in link; with two it asks which account to use."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import mcp.types as types
from mcp import Client

from conftest import assert_connected, sign_in

README = Path(__file__).resolve().parents[2] / "README.md"
README_URL = "http://127.0.0.1:8080/mcp"


def readme_client(mcp_url: str) -> str:
    """The Python block of the README's "The first client" section, pointed at `mcp_url`."""
    text = README.read_text()
    section = re.search(r"^## The first client\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README.md has no section \"## The first client\""
    blocks = re.findall(r"^```python\n(.*?)^```", section.group(1), re.S | re.M)
    assert len(blocks) == 1, f"expected one python block in the section, found {len(blocks)}"
    assert blocks[0].count(README_URL) == 1, f"the snippet should name {README_URL} once"
    return blocks[0].replace(README_URL, mcp_url)


class Terminal:
    """The snippet running as a program: what it printed so far, and a keyboard."""

    def __init__(self, source: str, workdir: Path):
        script = workdir / "first_client.py"
        script.write_text(source)
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}
        self.process = subprocess.Popen(
            [sys.executable, str(script)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=workdir,
        )
        self.screen = ""
        self._read_to = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        while chunk := self.process.stdout.read1(4096):
            with self._lock:
                self.screen += chunk.decode("utf-8", "replace")

    def expect(self, pattern: str, timeout: float = 60) -> re.Match:
        """Waits until the program has printed `pattern` (after what was expected before)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                found = re.compile(pattern, re.M).search(self.screen, self._read_to)
                if found:
                    self._read_to = found.end()
                    return found
            if self.process.poll() is not None or time.monotonic() > deadline:
                time.sleep(0.2)  # whatever was still in the pipe
                raise AssertionError(f"the client never printed {pattern!r}; it printed:\n{self.screen}")
            time.sleep(0.05)

    def type(self, line: str) -> None:
        self.process.stdin.write(f"{line}\n".encode())
        self.process.stdin.flush()

    def finish(self, timeout: float = 60) -> str:
        """Waits for the program to exit with 0; everything it printed after the last expect."""
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(f"the client did not finish; it printed:\n{self.screen}")
        time.sleep(0.1)
        with self._lock:
            assert code == 0, f"the client exited with {code}; it printed:\n{self.screen}"
            return self.screen[self._read_to:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def invoice_lines(invoices: list[dict]) -> list[str]:
    """The lines the README's client prints for `invoices`."""
    return [f"{i['number']} {i['customer']} {i['amount_minor']} {i['currency']}" for i in invoices]


async def invoices_of(grantry, account: str) -> list[dict]:
    async with Client(grantry.mcp_url, mode="2026-07-28", cache=None) as client:
        result = await client.call_tool("list_invoices", {"status": "all", "account": account})
        assert result.is_error is not True, result
        assert result.structured_content["account"] == account
        return result.structured_content["invoices"]


async def connect_two_accounts(grantry, first: str, second: str) -> None:
    """The first account through list_invoices's sign-in, the second through connect_account's
    link, each signed in at the demo as a user of its own."""

    async def on_elicit(ctx, params):
        assert isinstance(params, types.ElicitRequestURLParams), params
        assert_connected(await sign_in(params.url, user=first))
        return types.ElicitResult(action="accept")

    async with Client(grantry.mcp_url, mode="2026-07-28", elicitation_callback=on_elicit, cache=None) as client:
        assert (await client.call_tool("list_invoices", {})).is_error is not True
        card = await client.call_tool("connect_account", {})
        assert_connected(await sign_in(card.meta["grantry/connect"]["url"], user=second))
        listed = await client.call_tool("list_connections", {})
        assert [c["account"] for c in listed.structured_content["connections"]] == [first, second]


def test_the_readme_client_signs_in_and_prints_the_invoices(grantry, tmp_path):
    terminal = Terminal(readme_client(grantry.mcp_url), tmp_path)
    try:
        link = terminal.expect(r"^Open this link and sign in: (\S+)\n").group(1)
        assert link.startswith(f"{grantry.base}/connect/"), link
        terminal.expect(re.escape("Press Enter once the page says the account is connected… "))
        assert_connected(anyio.run(sign_in, link))
        terminal.type("")
        printed = terminal.finish()
    finally:
        terminal.stop()
    expected = invoice_lines(anyio.run(invoices_of, grantry, "demo-user"))
    assert len(expected) == 5
    assert printed.splitlines() == expected, printed


def test_with_two_accounts_the_readme_client_asks_which_and_prints_its_invoices(grantry, tmp_path):
    anyio.run(connect_two_accounts, grantry, "alice", "bob")
    alice, bob = (invoice_lines(anyio.run(invoices_of, grantry, user)) for user in ("alice", "bob"))
    assert bob and not set(alice) & set(bob), "two accounts, two sets of invoices"

    terminal = Terminal(readme_client(grantry.mcp_url), tmp_path)
    try:
        asked = terminal.expect(
            r"^Several Demo Billing accounts are connected\. Which one should be used\?\n((?: *\d+\. .*\n)+)Number: "
        )
        choices = {name: number for number, name in re.findall(r"^ *(\d+)\. (.*)$", asked.group(1), re.M)}
        assert set(choices) == {"alice", "bob"}, terminal.screen
        terminal.type(choices["bob"])
        printed = terminal.finish()
    finally:
        terminal.stop()
    assert "Open this link" not in terminal.screen, "both accounts were connected: no sign-in"
    assert printed.splitlines() == bob, printed
