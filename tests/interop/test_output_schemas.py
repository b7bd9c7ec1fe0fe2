"""Every answer of a tool with an output schema is valid structured content or isError:true, in
every round: each such tool's refusal paths and its success shapes (0, 1 and 2 connections),
walked with the official Python SDK client (mcp 2.3.0) in both eras. The SDK checks the
structured content of every answer that is not an error against the listed outputSchema and
raises when it is missing or wrong; the test checks it once more itself, formats included."""

from __future__ import annotations

import anyio
import pytest
from jsonschema import FormatChecker
from jsonschema.validators import validator_for

import mcp.types as types
from mcp import Client

from conftest import Grantry, assert_connected, sign_in

SCHEMA_TOOLS = {"list_invoices", "list_connections", "connect_account", "connection_status"}
ERAS = ["2026-07-28", "legacy"]


def test_the_format_checks_are_installed():
    """Without rfc3339-validator and rfc3986-validator jsonschema passes any date-time and uri."""
    assert {"date", "date-time", "uri"} <= set(FormatChecker().checkers)


class Walker:
    """A client of one era that calls tools and checks that the SDK took each answer, and that
    the answer is an error or structured content valid against the tool's outputSchema."""

    def __init__(self, client: Client, schemas: dict):
        self.client = client
        self.schemas = schemas

    async def call(self, tool: str, arguments: dict) -> types.CallToolResult:
        try:
            result = await self.client.call_tool(tool, arguments)
        except RuntimeError as refused:  # the SDK's answer to content not matching the schema
            pytest.fail(f"the SDK refused the answer of {tool} {arguments}: {refused}")
        assert isinstance(result, types.CallToolResult), result
        if result.is_error is not True:
            assert result.structured_content is not None, f"{tool} {arguments}: no structured content: {result}"
            schema = self.schemas[tool]
            validator = validator_for(schema)(schema, format_checker=FormatChecker())
            errors = [e.message for e in validator.iter_errors(result.structured_content)]
            assert not errors, f"{tool} {arguments}: {errors}\n{result.structured_content}"
        return result

    async def refused(self, tool: str, arguments: dict, says: str) -> None:
        """The call is refused: isError true, with `says` in its text; the SDK raised nothing."""
        result = await self.call(tool, arguments)
        assert result.is_error is True, f"{tool} {arguments}: {result}"
        assert says in result.content[0].text, result.content[0].text

    async def succeeds(self, tool: str, arguments: dict) -> dict:
        result = await self.call(tool, arguments)
        assert result.is_error is not True, f"{tool} {arguments}: {result}"
        return result.structured_content


async def walk(grantry: Grantry, era: str, steps, on_elicit=None) -> None:
    async with Client(grantry.mcp_url, mode=era, elicitation_callback=on_elicit, cache=None) as client:
        listed = await client.list_tools()
        schemas = {t.name: t.output_schema for t in listed.tools if t.output_schema is not None}
        assert set(schemas) == SCHEMA_TOOLS, sorted(schemas)
        for schema in schemas.values():
            validator_for(schema).check_schema(schema)
        await steps(Walker(client, schemas))


def answering(*answers: types.ElicitResult, asked: list | None = None):
    """An elicitation callback giving `answers` in order; records (mode, form fields)."""
    pending = list(answers)

    async def on_elicit(ctx, params):
        fields = sorted(params.requested_schema["properties"]) if params.mode == "form" else None
        if asked is not None:
            asked.append((params.mode, fields))
        assert pending, f"asked once more than expected: {params}"
        return pending.pop(0)

    return on_elicit


async def connect(grantry: Grantry, user: str) -> None:
    """Connects the demo account `user` through connect_account's link."""
    async with Client(grantry.mcp_url, mode="2026-07-28", cache=None) as client:
        card = await client.call_tool("connect_account", {})
        assert_connected(await sign_in(card.meta["grantry/connect"]["url"], user=user))


@pytest.fixture
def two_accounts():
    server = Grantry([])
    try:
        anyio.run(connect, server, "alice")
        anyio.run(connect, server, "bob")
        yield server
    finally:
        server.stop()


NOT_OFFERED = "The provider `nope` is not offered here"


@pytest.mark.parametrize("era", ERAS)
def test_refusals_with_no_account_connected(grantry, era):
    async def steps(w: Walker):
        for tool in ["list_invoices", "connect_account", "connection_status"]:
            await w.refused(tool, {"provider": "nope"}, NOT_OFFERED)
        # A client that cannot show a link (link mode, the default): the link to pass on.
        await w.refused("list_invoices", {}, "Give the user this link")

    anyio.run(walk, grantry, era, steps)


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_or_cancelled_sign_in_is_an_error_the_sdk_takes(grantry, action):
    asked: list = []

    async def steps(w: Walker):
        await w.refused("list_invoices", {}, f"the user chose '{action}'")

    anyio.run(walk, grantry, "2026-07-28", steps, answering(types.ElicitResult(action=action), asked=asked))
    assert asked == [("url", None)]


def test_a_sign_in_link_never_opened_is_an_error_the_sdk_takes():
    server = Grantry(["--unopened-link-wait", "1", "--retry-hold", "1"])
    try:
        asked: list = []

        async def steps(w: Walker):
            await w.refused("list_invoices", {}, "The user has not opened the sign-in page")

        anyio.run(walk, server, "2026-07-28", steps, answering(types.ElicitResult(action="accept"), asked=asked))
        assert asked == [("url", None)]
    finally:
        server.stop()


@pytest.mark.parametrize("era", ERAS)
def test_refusals_with_one_account_connected(grantry, era):
    anyio.run(connect, grantry, "alice")

    async def steps(w: Walker):
        await w.refused("list_invoices", {"account": "nobody"}, "`nobody` names no single connected")
        await w.refused("list_invoices", {"cursor": "not-a-cursor"}, "The cursor is not a next_cursor")
        for tool in ["list_invoices", "connect_account", "connection_status"]:
            await w.refused(tool, {"provider": "nope"}, NOT_OFFERED)

    anyio.run(walk, grantry, era, steps)


NONE_CHOSEN = "No account was chosen, so nothing was done"


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_or_cancelled_account_choice_is_an_error_the_sdk_takes(two_accounts, action):
    asked: list = []

    async def steps(w: Walker):
        # `call` fails the test if the SDK raised; the answer is an error, said explicitly.
        result = await w.call("list_invoices", {})
        assert result.is_error is True, result
        assert result.structured_content is None, result
        assert NONE_CHOSEN in result.content[0].text, result.content[0].text

    anyio.run(walk, two_accounts, "2026-07-28", steps, answering(types.ElicitResult(action=action), asked=asked))
    assert asked == [("form", ["account"])], "asked which account, once"


def test_an_account_not_offered_is_asked_again_and_then_cancelled(two_accounts):
    asked: list = []
    answers = [
        types.ElicitResult(action="accept", content={"account": "mallory"}),
        types.ElicitResult(action="cancel"),
    ]

    async def steps(w: Walker):
        await w.refused("list_invoices", {}, NONE_CHOSEN)

    anyio.run(walk, two_accounts, "2026-07-28", steps, answering(*answers, asked=asked))
    assert asked == [("form", ["account"])] * 2


@pytest.mark.parametrize("era", ERAS)
def test_refusals_with_two_accounts_and_a_client_without_forms(two_accounts, era):
    """No elicitation at all (the Python SDK declares forms and URLs together or neither)."""

    async def steps(w: Walker):
        await w.refused("list_invoices", {}, "Connected Demo Billing accounts: alice (id alice), bob (id bob)")
        await w.refused("list_invoices", {"account": "nobody"}, "`nobody` names no single connected")
        await w.refused("list_invoices", {"account": "bob", "cursor": "not-a-cursor"}, "The cursor is not")
        for tool in ["list_invoices", "connect_account", "connection_status"]:
            await w.refused(tool, {"provider": "nope"}, NOT_OFFERED)

    anyio.run(walk, two_accounts, era, steps)


def test_legacy_era_with_two_accounts_names_them_instead_of_asking(two_accounts):
    asked: list = []

    async def steps(w: Walker):
        await w.refused("list_invoices", {}, "Connected Demo Billing accounts: alice (id alice), bob (id bob)")

    anyio.run(walk, two_accounts, "legacy", steps, answering(asked=asked))
    assert asked == []


@pytest.mark.parametrize("era", ERAS)
def test_success_shapes_with_zero_one_and_two_connections(grantry, era):
    async def shapes(accounts: list[str]):
        async def steps(w: Walker):
            listed = await w.succeeds("list_connections", {})
            assert [c["account"] for c in listed["connections"]] == accounts
            card = await w.succeeds("connect_account", {})
            assert card["status"] == ("connected" if accounts else "connect_required")
            assert [c["account"] for c in card["connections"]] == accounts
            status = await w.succeeds("connection_status", {})
            assert [c["account"] for c in status["connections"]] == accounts
            for tool in ["connect_account", "connection_status"]:
                await w.succeeds(tool, {"provider": "demo"})
            for account in accounts:
                invoices = await w.succeeds("list_invoices", {"account": account, "status": "all"})
                assert invoices["account"] == account and invoices["invoices"], invoices
            if len(accounts) == 1:
                assert (await w.succeeds("list_invoices", {}))["account"] == accounts[0]

        await walk(grantry, era, steps)

    async def main():
        await shapes([])
        await connect(grantry, "alice")
        await shapes(["alice"])
        await connect(grantry, "bob")
        await shapes(["alice", "bob"])

    anyio.run(main)


def test_the_chosen_account_answers_with_its_invoices(two_accounts):
    asked: list = []

    async def steps(w: Walker):
        invoices = await w.succeeds("list_invoices", {"status": "all"})
        assert invoices["account"] == "bob"

    chosen = types.ElicitResult(action="accept", content={"account": "bob"})
    anyio.run(walk, two_accounts, "2026-07-28", steps, answering(chosen, asked=asked))
    assert asked == [("form", ["account"])]
