"""fast-agent-mcp with its defaults against grantry, no model: the passthrough model makes the
tool call it is told to, through the agent's own tool path, and its reply is the tool result
as a model would be given it. fast-agent declares URL elicitation and its default handler
accepts a link at once without showing it to anyone; grantry notices that the link was never
opened and answers with it in words the model reads."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
from fast_agent import FastAgent

from conftest import assert_connected, link_in, sign_in

CONFIG = Path(__file__).resolve().parent / "fastagent.config.yaml"
CALL = '***CALL_TOOL grantry__list_invoices {"status": "all"}'


def test_a_link_accepted_but_shown_to_nobody_reaches_the_model_soon(grantry):
    os.environ["GRANTRY_MCP_URL"] = grantry.mcp_url
    fast = FastAgent("grantry-ci", config_path=str(CONFIG), parse_cli_args=False, quiet=True)

    @fast.agent(name="assistant", instruction="Lists invoices.", servers=["grantry"], model="passthrough")
    async def _assistant():
        pass

    async def main():
        async with fast.run() as app:
            started = time.monotonic()
            seen = await app.assistant.send(CALL)
            waited = time.monotonic() - started
            # grantry's --unopened-link-wait (15 s), not ten held rounds of 45 s.
            assert waited < 40, f"{waited:.0f} s"
            assert "has not opened the sign-in page" in seen, seen
            assert_connected(await sign_in(link_in(seen)))
            again = await app.assistant.send(CALL)
            assert '"invoices"' in again, again

    anyio.run(main)
