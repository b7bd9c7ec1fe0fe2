"""Form-mode elicitation with the official MCP Python SDK client (mcp 2.3.0), answers
scripted: create_invoice asks for exactly what its validator rejects; void_invoice runs only
after an explicit yes. Against the demo provider of a real grantry."""

from __future__ import annotations

import anyio
import httpx2
import pytest

import mcp.types as types
from mcp import Client, MCPError

from conftest import sign_in

GOOD = {
    "email": "ap@acme.example",
    "customer_name": "Acme GmbH",
    "amount": 120.5,
    "currency": "EUR",
    "due_date": "2099-12-31",
    "description": "Consulting, November",
}


def created(grantry) -> int:
    return httpx2.get(f"{grantry.base}/demo/stats").json()["invoices_created"]


def scripted(answers: list, asked: list):
    """An elicitation callback: URL requests sign in through the demo; form requests are
    answered from `answers` in order, and recorded in `asked`."""

    async def on_elicit(ctx, params):
        if isinstance(params, types.ElicitRequestURLParams):
            await sign_in(params.url)
            return types.ElicitResult(action="accept")
        asked.append((sorted(params.requested_schema["properties"]), params.message))
        return answers.pop(0)

    return on_elicit


async def connect(client: Client) -> None:
    result = await client.call_tool("list_invoices", {"status": "all"})
    assert result.is_error is not True


def test_create_invoice_asks_again_until_valid_and_creates_once(grantry):
    asked: list = []
    answers = [
        types.ElicitResult(action="accept", content={"email": "still wrong"}),
        types.ElicitResult(action="accept", content={"email": "ap@acme.example"}),
    ]

    async def main():
        async with Client(grantry.mcp_url, mode="2026-07-28", elicitation_callback=scripted(answers, asked), cache=None) as client:
            await connect(client)
            result = await client.call_tool("create_invoice", {**GOOD, "email": "ap-at-acme"})
            assert result.is_error is not True, result
            invoice = result.structured_content["invoice"]
            assert invoice["amount_minor"] == 12050 and invoice["currency"] == "EUR"
            assert result.content[0].text.startswith("Created invoice DEMO-N0001 for Acme GmbH (120.50 EUR)")

    anyio.run(main)
    assert [fields for fields, _ in asked] == [["email"], ["email"]], "exactly the email, twice"
    assert all("Enter a valid email address." in message for _, message in asked)
    assert created(grantry) == 1


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_declining_the_form_creates_nothing(grantry, action):
    async def main():
        async with Client(grantry.mcp_url, mode="2026-07-28", elicitation_callback=scripted([types.ElicitResult(action=action)], []), cache=None) as client:
            await connect(client)
            result = await client.call_tool("create_invoice", {**GOOD, "amount": -1})
            assert result.content[0].text == "Creation cancelled."

    anyio.run(main)
    assert created(grantry) == 0


def test_a_form_state_replayed_with_other_arguments_is_refused(grantry):
    async def main():
        async with Client(grantry.mcp_url, mode="2026-07-28", elicitation_callback=scripted([], []), cache=None) as client:
            await connect(client)
            first = await client.session.call_tool(
                "create_invoice", {**GOOD, "email": "x"}, allow_input_required=True
            )
            assert isinstance(first, types.InputRequiredResult)
            answer = {"invoice_details": types.ElicitResult(action="accept", content={"email": "ap@acme.example"})}
            with pytest.raises(MCPError) as caught:
                await client.session.call_tool(
                    "create_invoice", {**GOOD, "email": "x", "amount": 99999},
                    input_responses=answer, request_state=first.request_state, allow_input_required=True,
                )
            assert caught.value.code == -32602

    anyio.run(main)
    assert created(grantry) == 0


def test_void_invoice_runs_only_after_an_explicit_yes(grantry):
    async def main():
        async with Client(grantry.mcp_url, mode="2026-07-28", elicitation_callback=scripted([], []), cache=None) as client:
            await connect(client)
            made = await client.call_tool("create_invoice", GOOD)
            invoice_id = made.structured_content["invoice"]["id"]

            async def status() -> str:
                listed = await client.call_tool("list_invoices", {"status": "all"})
                return next(i["status"] for i in listed.structured_content["invoices"] if i["id"] == invoice_id)

            for answer in [
                types.ElicitResult(action="accept", content={"confirm": False}),
                types.ElicitResult(action="decline"),
                types.ElicitResult(action="cancel"),
            ]:
                asked: list = []
                async with Client(grantry.mcp_url, mode="2026-07-28", elicitation_callback=scripted([answer], asked), cache=None) as other:
                    result = await other.call_tool("void_invoice", {"invoice_id": invoice_id})
                    assert result.content[0].text == "Void cancelled; nothing was changed."
                assert asked[0][0] == ["confirm"]
                assert "DEMO-N0001" in asked[0][1] and "cannot be undone" in asked[0][1]
                assert await status() == "open"
            yes = [types.ElicitResult(action="accept", content={"confirm": True})]
            async with Client(grantry.mcp_url, mode="2026-07-28", elicitation_callback=scripted(yes, []), cache=None) as other:
                result = await other.call_tool("void_invoice", {"invoice_id": invoice_id})
                assert result.content[0].text.startswith("Voided invoice DEMO-N0001")
            assert await status() == "void"

    anyio.run(main)
