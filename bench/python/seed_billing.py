"""The Python baseline: the seed article's billing example (mcp 2.3.0, MCPServer), served
statelessly with JSON answers under uvicorn, as a production deployment of it would run.

`list_invoices` is the article's code: input_required with a URL elicitation while the user
has no grant, "2 open invoices." once they have. BENCH_GRANTED=1 starts with the grant in
place (the grant-present and retry scenarios).

    python seed_billing.py 127.0.0.1:9002
"""

import os
import secrets
import sys

import uvicorn
from mcp import MCPError
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.request_state import RequestStateSecurity
from mcp.types import (
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ElicitRequest,
    ElicitRequestURLParams,
    InputRequiredResult,
)

# Replicas of a production deployment share the requestState key; the benchmark's granted and
# ungranted instances do too, so a first round's state opens in the retry scenario. Its
# lifetime is grantry's in the benchmark (`--request-state-ttl 86400`): the retry scenario
# comes long after the first round, past the SDK's default of 600 s.
_key = os.environ.get("BENCH_STATE_KEY")
mcp = MCPServer(
    "billing",
    request_state_security=(
        RequestStateSecurity(keys=[bytes.fromhex(_key)], ttl=86400.0) if _key else None
    ),
)

grants: dict[str, str] = {}
flows: dict[str, str] = {}  # flow id -> the user who started that sign-in
if os.environ.get("BENCH_GRANTED") == "1":
    grants["user-123"] = "grant"


def require_url_elicitation(ctx: Context) -> None:
    caps = ctx.client_capabilities
    if not (caps and caps.elicitation and caps.elicitation.url):
        raise MCPError(
            code=MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="list_invoices needs URL-mode elicitation to connect the billing account.",
            data={"requiredCapabilities": {"elicitation": {"url": {}}}},
        )


@mcp.tool()
async def list_invoices(ctx: Context) -> str | InputRequiredResult:
    """List the open invoices in the user's billing account."""
    user = "user-123"  # stub: a real server takes the user from the access token
    answer = (ctx.input_responses or {}).get("login")
    if answer is not None and answer.action != "accept":
        return "The billing account isn't connected, so no invoices were read."
    if user in grants:
        return "2 open invoices."  # a real tool calls the billing API with the grant
    require_url_elicitation(ctx)
    flow_id = ctx.request_state or secrets.token_urlsafe(16)  # the same flow on a retry
    flows[flow_id] = user
    link = ElicitRequestURLParams(
        message="Open this link to connect your billing account.",
        url=f"https://billing.example.com/connect?flow={flow_id}",
    )
    return InputRequiredResult(
        input_requests={"login": ElicitRequest(params=link)}, request_state=flow_id
    )


if __name__ == "__main__":
    host, port = (sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:9002").rsplit(":", 1)
    app = mcp.streamable_http_app(stateless_http=True, json_response=True, host=host)
    uvicorn.run(app, host=host, port=int(port), log_level="warning", access_log=False)
