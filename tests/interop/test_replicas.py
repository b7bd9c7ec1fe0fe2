"""The Python SDK client against three grantry replicas sharing one store and key ring, on
PostgreSQL and on Redis (a missing server skips; under CI it fails):

- the client calls replica A, the browser opens the link on B, the callback lands on C, and
  the SDK's retry on A completes;
- behind a load balancer, the replica that issued the link is killed with SIGKILL before the
  callback, and the flow still completes on the others."""

from __future__ import annotations

import os
import secrets
import subprocess

import anyio
import httpx2
import pytest

import mcp.types as types
from mcp import Client

from balancer import Balancer
from conftest import Grantry, first_form

CI = os.environ.get("CI") == "true"


def _unavailable(what: str, why: str):
    if CI:
        pytest.fail(f"{what} is required under CI=true: {why}")
    pytest.skip(f"{what}: {why}")


@pytest.fixture(params=["postgres", "redis"])
def shared_store(request):
    """Store arguments for a fresh PostgreSQL database or Redis key prefix."""
    suffix = secrets.token_hex(8)
    if request.param == "postgres":
        name = f"grantry_test_{suffix}"
        made = subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"CREATE DATABASE {name}"],
            capture_output=True,
            text=True,
        )
        if made.returncode != 0:
            _unavailable("PostgreSQL", made.stderr.strip() or "psql failed")
        yield ["--store", f"postgres://postgres@127.0.0.1:5432/{name}"]
        subprocess.run(
            ["psql", "-h", "127.0.0.1", "-U", "postgres", "-qc", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"],
            capture_output=True,
        )
    else:
        ping = subprocess.run(["redis-cli", "-h", "127.0.0.1", "ping"], capture_output=True, text=True)
        if ping.stdout.strip() != "PONG":
            _unavailable("Redis", ping.stderr.strip() or "no PONG")
        prefix = f"grantry-interop-{suffix}:"
        yield ["--store", "redis://127.0.0.1:6379", "--store-prefix", prefix, "--allow-volatile-store", "true"]
        keys = subprocess.run(
            ["redis-cli", "-h", "127.0.0.1", "--scan", "--pattern", f"{prefix}*"], capture_output=True, text=True
        ).stdout.split()
        if keys:
            subprocess.run(["redis-cli", "-h", "127.0.0.1", "del", *keys], capture_output=True)


def test_any_replica_serves_any_step(shared_store):
    key = subprocess.run([os.environ.get("GRANTRY_BIN", ""), "keys", "generate"], capture_output=True, text=True)
    ring = key.stdout.strip()
    assert ring, key.stderr
    # Every replica announces the same public URL (a load balancer's); the test then talks to
    # each replica directly. Server-to-server calls to the demo provider go to A's port: A's
    # own URL (its port is the one it started on), then given to B and C.
    common = ["--keys", ring, "--retry-hold", "20", *shared_store]
    a = Grantry([*common, "--public-url", "http://127.0.0.1:{port}"])
    public = a.base
    b, c = (Grantry([*common, "--public-url", public]) for _ in range(2))
    try:
        callbacks_on_c: list[int] = []

        async def on_elicit(ctx, params):
            link_on_b = params.url.replace(public, b.base, 1)
            async with httpx2.AsyncClient(timeout=30) as browser:
                page = await browser.get(link_on_b)
                action, fields = first_form(page)
                sent = await browser.post(action, data=fields)
                assert sent.status_code == 303, sent.text
                consent = await browser.get(sent.headers["location"])
                action, fields = first_form(consent)
                fields["decision"] = "approve"
                back = await browser.post(action, data=fields)
                callback_on_c = back.headers["location"].replace(public, c.base, 1)
                landed = await browser.get(callback_on_c)
                callbacks_on_c.append(landed.status_code)
            return types.ElicitResult(action="accept")

        async def main():
            async with Client(a.mcp_url, mode="2026-07-28", elicitation_callback=on_elicit, cache=None) as client:
                result = await client.call_tool("list_invoices", {"status": "all"})
                assert result.is_error is not True
                assert len(result.structured_content["invoices"]) == 5

        anyio.run(main)
        assert callbacks_on_c == [303], "the callback completed on C"
        assert "grant stored" in c.log(), "C stored the grant"
        assert "grant stored" not in a.log() and "grant stored" not in b.log()
    finally:
        for replica in (a, b, c):
            replica.stop()


def test_the_replica_that_issued_the_link_dies_and_nothing_is_lost(shared_store):
    ring = subprocess.run([os.environ.get("GRANTRY_BIN", ""), "keys", "generate"], capture_output=True, text=True)
    ring = ring.stdout.strip()
    # The balancer first (its URL is the replicas' public URL), told their ports once they
    # listen: each starts on a port of its own finding.
    balancer = Balancer([])
    common = ["--keys", ring, "--public-url", balancer.base, "--retry-hold", "20", *shared_store]
    replicas = {replica.port: replica for replica in (Grantry(common) for _ in range(3))}
    ports = list(replicas)
    balancer.backends.extend(ports)
    try:
        killed: list[int] = []

        async def on_elicit(ctx, params):
            issuer = balancer.served[0]  # the replica that answered the first call
            replicas[issuer].process.kill()
            replicas[issuer].process.wait()
            killed.append(issuer)
            alive = [port for port in ports if port != issuer]
            on = lambda port, url: url.replace(balancer.base, f"http://127.0.0.1:{port}", 1)  # noqa: E731
            async with httpx2.AsyncClient(timeout=30) as browser:
                page = await browser.get(on(alive[0], params.url))
                action, fields = first_form(page)
                sent = await browser.post(action, data=fields)
                consent = await browser.get(sent.headers["location"])
                action, fields = first_form(consent)
                fields["decision"] = "approve"
                back = await browser.post(action, data=fields)
                landed = await browser.get(on(alive[1], back.headers["location"]))
                assert landed.status_code == 303, landed.text
            return types.ElicitResult(action="accept")

        async def main():
            async with Client(f"{balancer.base}/mcp", mode="2026-07-28", elicitation_callback=on_elicit, cache=None) as client:
                result = await client.call_tool("list_invoices", {})
                assert result.is_error is not True
                assert result.structured_content["invoices"]

        anyio.run(main)
        assert len(killed) == 1
        assert balancer.served[-1] != killed[0], "the retry was served by a live replica"
    finally:
        for replica in replicas.values():
            replica.stop()
        balancer.close()
