"""The OpenAI Agents SDK against grantry, no model: a scripted model asks for one tool call
and records the function output the SDK builds for its next turn, which is what a real model
would be given. The SDK declares no elicitation at all, so this is grantry's answer to a
client that cannot show a link: by default the link in words; in spec mode a -32021, which
the SDK by default hides behind a fixed sentence."""

from __future__ import annotations

import json

import anyio
from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.mcp import MCPServerStreamableHttp
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from conftest import assert_connected, link_in, sign_in

set_tracing_disabled(True)


class ScriptedModel(Model):
    """First turn: call list_invoices. Next turn: keep what the tool gave, say "done"."""

    def __init__(self):
        self.given: list[str] = []

    async def get_response(self, system_instructions, input, model_settings, tools, *args, **kwargs):
        outputs = [i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"]
        if not outputs:
            call = ResponseFunctionToolCall(
                type="function_call", id="fc_1", call_id="call_1", name="list_invoices",
                arguments=json.dumps({"status": "all"}), status="completed",
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        self.given.append(text_of(outputs[-1]["output"]))
        said = ResponseOutputText(type="output_text", text="done", annotations=[])
        message = ResponseOutputMessage(type="message", id="m_1", role="assistant", status="completed", content=[said])
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def text_of(output) -> str:
    if isinstance(output, list):
        return "\n".join(item.get("text", json.dumps(item)) for item in output)
    return output if isinstance(output, str) else json.dumps(output)


async def model_sees(server, **mcp_config) -> str:
    """One turn of an agent calling list_invoices: what its model was given back."""
    model = ScriptedModel()
    agent = Agent(name="assistant", instructions="Lists invoices.", model=model, mcp_servers=[server],
                  mcp_config=mcp_config)
    await Runner.run(agent, "List my invoices")
    return model.given[-1]


def test_by_default_the_model_reads_the_link_and_the_call_completes_after_the_sign_in(grantry):
    async def main():
        async with MCPServerStreamableHttp(name="grantry", params={"url": grantry.mcp_url}) as server:
            seen = await model_sees(server)
            assert "not connected" in seen, seen
            assert_connected(await sign_in(link_in(seen)))
            assert '"invoices"' in await model_sees(server)

    anyio.run(main)


def test_in_spec_mode_the_sdk_hides_the_reason_unless_told_to_pass_it_on(grantry_spec_mode):
    def pass_it_on(context, error):
        return f"MCP error {getattr(error, 'code', '?')}: {error}"

    async def main():
        async with MCPServerStreamableHttp(name="grantry", params={"url": grantry_spec_mode.mcp_url}) as server:
            # The SDK's default: a -32021 reaches the model as a fixed sentence, no reason.
            assert await model_sees(server) == "An error occurred while running the tool. Please try again."
            # Its failure function passed on: the reason, naming what would work.
            seen = await model_sees(server, failure_error_function=pass_it_on)
            assert "-32021" in seen and "grantry bridge" in seen, seen

    anyio.run(main)
