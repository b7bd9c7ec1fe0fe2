"""The official MCP Python SDK client (mcp 2.3.0) against the real grantry binary."""

from __future__ import annotations

import re

import anyio
import pytest

import mcp.types as types
from mcp import Client, MCPError

from conftest import Grantry, assert_connected, sign_in


def run(coro):
    return anyio.run(coro)


def test_discovers_the_modern_protocol_and_lists_tools(grantry):
    async def main():
        async with Client(grantry.mcp_url, mode="auto", cache=None) as client:
            assert client.protocol_version == "2026-07-28"
            tools = await client.list_tools()
            tool = next(t for t in tools.tools if t.name == "list_invoices")
            assert tool.annotations.read_only_hint is True
            assert tool.output_schema is not None

    run(main)


def test_the_whole_sign_in_flow_ends_with_invoices(grantry):
    links: list[str] = []

    async def on_elicit(ctx, params):
        assert isinstance(params, types.ElicitRequestURLParams)
        assert params.url.startswith(f"{grantry.base}/connect/")
        links.append(params.url)
        final = await sign_in(params.url)
        assert_connected(final)
        return types.ElicitResult(action="accept")

    async def main():
        async with Client(grantry.mcp_url, mode="2026-07-28", elicitation_callback=on_elicit, cache=None) as client:
            result = await client.call_tool("list_invoices", {"status": "all"})
            assert result.is_error is not True
            invoices = result.structured_content["invoices"]
            assert len(invoices) == 5
            assert {i["status"] for i in invoices} <= {"open", "paid"}
            # Connected now: the next call completes without asking.
            again = await client.call_tool("list_invoices", {})
            assert all(i["status"] == "open" for i in again.structured_content["invoices"])

    run(main)
    assert len(links) == 1, "the user was asked exactly once"


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declining_completes_with_an_error_and_connects_nothing(grantry, action):
    asked = 0

    async def on_elicit(ctx, params):
        nonlocal asked
        asked += 1
        return types.ElicitResult(action=action)

    async def main():
        async with Client(grantry.mcp_url, mode="2026-07-28", elicitation_callback=on_elicit, cache=None) as client:
            for _ in range(2):
                result = await client.call_tool("list_invoices", {})
                assert result.is_error is True
                assert "not connected" in result.content[0].text

    run(main)
    assert asked == 2, "still not connected: asked again on the second call"


def test_a_client_without_url_elicitation_gets_the_link_to_pass_on(grantry):
    async def main():
        async with Client(grantry.mcp_url, mode="2026-07-28", cache=None) as client:
            result = await client.call_tool("list_invoices", {})
            assert result.is_error is True
            text = result.content[0].text
            link = re.search(r"https?://\S+/connect/\S+", text).group(0)
            assert_connected(await sign_in(link))
            again = await client.call_tool("list_invoices", {})
            assert again.is_error is not True, again

    run(main)


@pytest.fixture
def grantry_spec_mode():
    server = Grantry(["--no-url-elicitation", "spec"])
    yield server
    server.stop()


def test_a_client_without_url_elicitation_gets_32021_in_spec_mode(grantry_spec_mode):
    async def main():
        async with Client(grantry_spec_mode.mcp_url, mode="2026-07-28", cache=None) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("list_invoices", {})
            assert caught.value.code == -32021
            assert caught.value.data["requiredCapabilities"] == {"elicitation": {"url": {}}}

    run(main)


def test_a_tampered_or_rebound_request_state_is_refused(grantry_short_hold):
    grantry = grantry_short_hold

    async def on_elicit(ctx, params):
        return types.ElicitResult(action="accept")

    async def main():
        async with Client(grantry.mcp_url, mode="2026-07-28", elicitation_callback=on_elicit, cache=None) as client:
            first = await client.session.call_tool("list_invoices", {}, allow_input_required=True)
            assert isinstance(first, types.InputRequiredResult)
            (key,) = first.input_requests.keys()
            accept = {key: types.ElicitResult(action="accept")}
            for arguments, state in [
                ({}, first.request_state + "-TAMPERED"),
                ({"status": "paid"}, first.request_state),
            ]:
                with pytest.raises(MCPError) as caught:
                    await client.session.call_tool(
                        "list_invoices", arguments, input_responses=accept, request_state=state, allow_input_required=True
                    )
                assert caught.value.code == -32602
                assert caught.value.message == "Invalid or expired requestState"
            # The genuine state, with the sign-in still pending, is held and then asked again
            # with the same link.
            again = await client.session.call_tool(
                "list_invoices", {}, input_responses=accept, request_state=first.request_state, allow_input_required=True
            )
            assert isinstance(again, types.InputRequiredResult)
            assert again.input_requests[key].params.url == first.input_requests[key].params.url

    run(main)
