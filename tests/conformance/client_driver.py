#!/usr/bin/env python3
"""The stdio client in front of `grantry bridge` for the conformance suite's client scenarios.

The suite runs `client_driver.py SERVER_URL` once per scenario, with MCP_CONFORMANCE_SCENARIO
(and, for some, MCP_CONFORMANCE_CONTEXT) in the environment. This starts `grantry bridge
SERVER_URL` ($GRANTRY_BIN) with a token cache of its own and an opener that follows the mock
authorization server's redirect into the bridge's loopback listener (follow_link), then speaks
MCP to it on stdio as an editor client would (`initialize`, form elicitation declared) and does
what the scenario needs: list the tools, call them, answer the server's questions. It exits 0
once its plan ran, whatever the calls answered: the suite's checks judge the bridge. Test
scaffolding only (stdlib Python)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The suite's fixed Client ID Metadata Document URL (auth/basic-cimd); the mock authorization
# server accepts it without fetching it.
CIMD_URL = "https://conformance-test.local/client-metadata.json"
# Each answer from the bridge within this; a sign-in the mock grants at once fits easily.
ANSWER_TIMEOUT = 25


class Bridge:
    """`grantry bridge` on pipes: requests out, answers matched by id, its questions answered."""

    def __init__(self, url: str, extra: list[str], workdir: Path):
        binary = os.environ.get("GRANTRY_BIN") or sys.exit("client_driver: set GRANTRY_BIN")
        args = [binary, "bridge", url, "--open-with", str(HERE / "follow_link"),
                "--token-cache", str(workdir / "tokens"), "--wait", "10", *extra]
        log = open(os.environ.get("GRANTRY_BRIDGE_LOG", workdir / "bridge.log"), "ab")
        # Its stderr goes to a file: a process still holding the suite's pipes would keep the
        # scenario open after this driver ended.
        self.process = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=log)
        self.next_id = 0
        self.waiting: dict[int, queue.Queue] = {}
        self.lock = threading.Lock()
        self.on_question = lambda params: {"action": "accept", "content": {"confirmed": True}}
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            message = json.loads(line)
            if "method" in message and "id" in message:
                threading.Thread(target=self._answer, args=(message,), daemon=True).start()
            elif "id" in message:
                with self.lock:
                    waiting = self.waiting.pop(message["id"], None)
                if waiting:
                    waiting.put(message)

    def _answer(self, request: dict) -> None:
        if request["method"] == "elicitation/create":
            reply = {"result": self.on_question(request["params"])}
        else:
            reply = {"error": {"code": -32601, "message": "not supported by the driver"}}
        self._write({"jsonrpc": "2.0", "id": request["id"], **reply})

    def _write(self, message: dict) -> None:
        with self.lock:
            self.process.stdin.write((json.dumps(message) + "\n").encode())
            self.process.stdin.flush()

    def request(self, method: str, params: dict | None = None) -> dict:
        """The bridge's answer (`result` or `error`), or {} if none came in time."""
        answered: queue.Queue = queue.Queue()
        with self.lock:
            self.next_id += 1
            ident = self.next_id
            self.waiting[ident] = answered
        self._write({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}})
        try:
            return answered.get(timeout=ANSWER_TIMEOUT)
        except queue.Empty:
            print(f"client_driver: no answer to {method} in {ANSWER_TIMEOUT} s", file=sys.stderr)
            return {}

    def notify(self, method: str) -> None:
        self._write({"jsonrpc": "2.0", "method": method})

    def initialize(self) -> None:
        self.request("initialize", {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "grantry-conformance-driver", "version": "1"},
        })
        self.notify("notifications/initialized")

    def tools(self) -> list[dict]:
        return self.request("tools/list").get("result", {}).get("tools", [])

    def call(self, name: str, arguments: dict | None = None) -> dict:
        return self.request("tools/call", {"name": name, "arguments": arguments or {}})

    def stop(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


def bridge_options(scenario: str, context: dict, workdir: Path) -> list[str]:
    """The bridge's options for a scenario: the client it authorizes as."""
    if "client_id" in context and "client_secret" in context:
        # Pre-registered: the secret in a 0600 file, never on the command line.
        secret = workdir / "client-secret"
        secret.touch(mode=0o600)
        secret.write_text(context["client_secret"])
        return ["--client-id", context["client_id"], "--client-secret-file", str(secret)]
    if scenario.startswith("auth/"):
        # Used where the authorization server says it accepts one; else a registration.
        return ["--client-metadata-url", CIMD_URL]
    return []


def call_every_tool(bridge: Bridge, context: dict) -> None:
    calls = context.get("toolCalls")
    if calls is None:
        calls = [{"name": tool["name"], "arguments": {}} for tool in bridge.tools()]
    else:
        bridge.tools()
    for call in calls:
        bridge.call(call["name"], call.get("arguments"))


def request_state(bridge: Bridge) -> None:
    """sep-2322: the bridge runs the rounds and asks this client; `unrelated` is called while
    `echo_state` waits for the answer, so its call must carry nothing of the other's round."""
    bridge.tools()
    confirm = bridge.on_question

    def answer_after_unrelated(params: dict) -> dict:
        bridge.on_question = confirm
        bridge.call("test_mrtr_unrelated")
        return confirm(params)

    bridge.on_question = answer_after_unrelated
    bridge.call("test_mrtr_echo_state")
    for name in ["test_mrtr_no_state", "test_mrtr_no_result_type"]:
        bridge.call(name)


def schema_echo(bridge: Bridge) -> None:
    tools = {tool["name"]: tool for tool in bridge.tools()}
    schema = tools.get("json_schema_2020_12_tool", {}).get("inputSchema", {})
    bridge.call("json_schema_echo", {"schema": schema})


PLANS = {
    "tools_call": lambda b, c: (b.tools(), b.call("add_numbers", {"a": 2, "b": 3})),
    "json-schema-ref-no-deref": lambda b, c: b.tools(),
    "json-schema-2020-12-preservation": lambda b, c: schema_echo(b),
    "sep-2322-client-request-state": lambda b, c: request_state(b),
}


def main() -> int:
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.TemporaryDirectory(prefix="grantry-conformance-") as tmp:
        workdir = Path(tmp)
        bridge = Bridge(url, bridge_options(scenario, context, workdir), workdir)
        # The suite ends a client that overruns with SIGTERM: the bridge goes with it.
        signal.signal(signal.SIGTERM, lambda *_: (bridge.process.kill(), sys.exit(1)))
        try:
            bridge.initialize()
            PLANS.get(scenario, call_every_tool)(bridge, context)
        finally:
            bridge.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
