"""oidc identity: the official MCP Python SDK client (mcp 2.3.0) with bearer tokens from a real
OpenID Connect provider (oidc-provider, tests/oidc), and browsers that sign in at it."""

from __future__ import annotations

import uuid

import anyio
import httpx2
import pytest

import mcp.types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from conftest import Grantry, assert_connected, first_form
from oidc_fixture import GRANTRY_CLIENT_ID, GRANTRY_CLIENT_SECRET, OidcProvider, access_token


@pytest.fixture(scope="module")
def oidc():
    provider = OidcProvider()
    yield provider
    provider.stop()


@pytest.fixture
def grantry_oidc(oidc):
    server = Grantry(
        ["--identity", "oidc", "--oidc-issuer", oidc.issuer, "--oidc-client-id", GRANTRY_CLIENT_ID,
         "--demo", "true"],
        env={"GRANTRY_OIDC_CLIENT_SECRET": GRANTRY_CLIENT_SECRET},
    )
    yield server
    server.stop()


def user(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def sdk_client(url: str, token: str, **kwargs) -> Client:
    """The SDK client sending `Authorization: Bearer` on every request."""
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=120)
    )
    return Client(streamable_http_client(url, http_client=http), mode="2026-07-28", cache=None, **kwargs)


async def open_as(browser: httpx2.AsyncClient, url: str, name: str) -> httpx2.Response:
    """Opens `url` following redirects; at the issuer's sign-in form, signs in as `name`."""
    page = await browser.get(url)
    if page.status_code == 200 and "/interaction/" in str(page.url):
        action, fields = first_form(page)
        fields["login"] = name
        page = await browser.post(action, data=fields)
    return page


def test_the_callers_sign_in_completes_and_another_user_opening_the_link_is_refused(oidc, grantry_oidc):
    alice, bob = user("alice"), user("bob")
    alice_token = access_token(oidc.issuer, alice, grantry_oidc.mcp_url)
    bob_saw: list[tuple[int, str]] = []

    async def on_elicit(ctx, params):
        assert isinstance(params, types.ElicitRequestURLParams)
        link = params.url
        # Bob gets Alice's link (forwarded by mistake or on purpose): refused after his login.
        async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as bobs:
            page = await open_as(bobs, link, bob)
            bob_saw.append((page.status_code, page.text))
        # Alice opens it: her login, then the same connect page, Continue, the provider.
        async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as alices:
            connect = await open_as(alices, link, alice)
            assert connect.status_code == 200, connect.text
            assert str(connect.url) == link, "back on the very page the link opened"
            action, fields = first_form(connect)
            consent = await alices.post(action, data=fields)
            action, fields = first_form(consent)
            fields["decision"] = "approve"
            final = await alices.post(action, data=fields)
            assert_connected(final)
        return types.ElicitResult(action="accept")

    async def main():
        async with sdk_client(grantry_oidc.mcp_url, alice_token, elicitation_callback=on_elicit) as client:
            result = await client.call_tool("list_invoices", {"status": "all"})
            assert result.is_error is not True, result
            assert len(result.structured_content["invoices"]) == 5

    anyio.run(main)
    assert len(bob_saw) == 1
    status, text = bob_saw[0]
    assert status == 403 and "belongs to someone else" in text
    assert "connect.identity_mismatch" in grantry_oidc.log()


def test_each_user_has_their_own_connections(oidc, grantry_oidc):
    alice, bob = user("alice"), user("bob")

    async def connect_as(name: str):
        async def on_elicit(ctx, params):
            async with httpx2.AsyncClient(follow_redirects=True, timeout=30) as browser:
                connect = await open_as(browser, params.url, name)
                action, fields = first_form(connect)
                consent = await browser.post(action, data=fields)
                action, fields = first_form(consent)
                fields["decision"] = "approve"
                await browser.post(action, data=fields)
            return types.ElicitResult(action="accept")

        return on_elicit

    asked_bob = 0

    async def bob_declines(ctx, params):
        nonlocal asked_bob
        asked_bob += 1
        return types.ElicitResult(action="decline")

    async def main():
        token = access_token(oidc.issuer, alice, grantry_oidc.mcp_url)
        async with sdk_client(grantry_oidc.mcp_url, token, elicitation_callback=await connect_as(alice)) as client:
            assert (await client.call_tool("list_invoices", {})).is_error is not True
        token = access_token(oidc.issuer, bob, grantry_oidc.mcp_url)
        async with sdk_client(grantry_oidc.mcp_url, token, elicitation_callback=bob_declines) as client:
            result = await client.call_tool("list_invoices", {})
            assert result.is_error is True and "not connected" in result.content[0].text

    anyio.run(main)
    assert asked_bob == 1, "Bob is asked to connect his own account"


def test_requests_without_a_valid_token_get_the_spec_challenge(oidc, grantry_oidc):
    metadata_url = f"{grantry_oidc.base}/.well-known/oauth-protected-resource/mcp"
    for token in [None, "not-a-token", access_token(oidc.other_issuer, user("eve"), grantry_oidc.mcp_url)]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        response = httpx2.post(
            grantry_oidc.mcp_url,
            headers={**headers, "Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
            content=b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}',
        )
        assert response.status_code == 401
        assert f'resource_metadata="{metadata_url}"' in response.headers["www-authenticate"]
    metadata = httpx2.get(metadata_url).json()
    assert metadata["resource"] == grantry_oidc.mcp_url
    assert metadata["authorization_servers"] == [oidc.issuer]
