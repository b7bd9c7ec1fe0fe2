"""The official MCP Python SDK client (mcp 2.3.0) in its legacy mode (`initialize`, a session,
2025-11-25) against the real grantry: URL elicitation arrives as -32042, the retry completes,
and the form rounds are asked with elicitation/create on the call's stream."""

from __future__ import annotations

import anyio
import httpx2
import pytest

import mcp.types as types
from mcp import Client, MCPError

from conftest import assert_connected, sign_in
from test_forms import GOOD, created, scripted


def url_elicitation(error: MCPError) -> dict:
    """The one URL elicitation of a -32042 (URLElicitationRequiredError)."""
    assert error.code == -32042, error
    (elicitation,) = error.data["elicitations"]
    return elicitation


async def connect_through_32042(client: Client) -> None:
    with pytest.raises(MCPError) as caught:
        await client.call_tool("list_invoices", {})
    final = await sign_in(url_elicitation(caught.value)["url"])
    assert_connected(final)


async def write_access_through_32042(client: Client, tool: str, arguments: dict) -> None:
    """A tool that writes on a connection that may only read: -32042 asking for write access
    (incremental consent), then the sign-in at the demo granting it."""
    with pytest.raises(MCPError) as caught:
        await client.call_tool(tool, arguments)
    elicitation = url_elicitation(caught.value)
    assert "create and change invoices" in elicitation["message"], elicitation
    assert_connected(await sign_in(elicitation["url"]))


def test_legacy_mode_negotiates_2025_11_25_and_lists_tools(grantry):
    async def main():
        async with Client(grantry.mcp_url, mode="legacy", cache=None) as client:
            assert client.protocol_version == "2025-11-25"
            tools = await client.list_tools()
            assert "list_invoices" in {t.name for t in tools.tools}

    anyio.run(main)


def test_a_missing_connection_is_32042_and_the_retry_after_signing_in_completes(grantry):
    async def on_elicit(ctx, params):  # declares elicitation; never called for -32042
        raise AssertionError("legacy URL elicitation is the -32042 error, not a request")

    async def main():
        async with Client(grantry.mcp_url, mode="legacy", elicitation_callback=on_elicit, cache=None) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("list_invoices", {"status": "all"})
            elicitation = url_elicitation(caught.value)
            assert elicitation["mode"] == "url"
            assert elicitation["elicitationId"]
            assert elicitation["url"].startswith(f"{grantry.base}/connect/")
            final = await sign_in(elicitation["url"])
            assert_connected(final)
            result = await client.call_tool("list_invoices", {"status": "all"})
            assert result.is_error is not True
            assert len(result.structured_content["invoices"]) == 5

    anyio.run(main)


def test_legacy_form_rounds_ask_exactly_the_rejected_field_and_create_once(grantry):
    asked: list = []
    answers = [types.ElicitResult(action="accept", content={"email": "ap@acme.example"})]

    async def main():
        async with Client(grantry.mcp_url, mode="legacy", elicitation_callback=scripted(answers, asked), cache=None) as client:
            await connect_through_32042(client)
            arguments = {**GOOD, "email": "ap-at-acme"}
            await write_access_through_32042(client, "create_invoice", arguments)
            assert created(grantry) == 0, "asking for write access wrote nothing"
            result = await client.call_tool("create_invoice", arguments)
            assert result.is_error is not True, result
            assert result.structured_content["invoice"]["amount_minor"] == 12050

    anyio.run(main)
    assert [fields for fields, _ in asked] == [["email"]]
    assert created(grantry) == 1


@pytest.mark.parametrize(
    "answer",
    [
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="cancel"),
        types.ElicitResult(action="accept", content={"confirm": False}),
    ],
)
def test_legacy_void_without_a_yes_voids_nothing(grantry, answer):
    async def main():
        async with Client(grantry.mcp_url, mode="legacy", elicitation_callback=scripted([answer], []), cache=None) as client:
            await connect_through_32042(client)
            await write_access_through_32042(client, "create_invoice", GOOD)
            made = await client.call_tool("create_invoice", GOOD)
            invoice_id = made.structured_content["invoice"]["id"]
            await client.call_tool("void_invoice", {"invoice_id": invoice_id})
            listed = await client.call_tool("list_invoices", {"status": "all"})
            status = next(i["status"] for i in listed.structured_content["invoices"] if i["id"] == invoice_id)
            assert status == "open"

    anyio.run(main)


def test_auto_mode_picks_the_modern_era(grantry):
    async def main():
        async with Client(grantry.mcp_url, mode="auto", cache=None) as client:
            assert client.protocol_version == "2026-07-28"

    anyio.run(main)
