//! The MCP conformance suite's fixture tools, compiled only with the `conformance` feature
//! (`tests/conformance/run` builds grantry so); the product binary has none of them.
//!
//! `@modelcontextprotocol/conformance` (server scenarios, revision 2026-07-28) calls tools by
//! fixed names and checks what they answer. Offering them lets CI run the official suite
//! against grantry itself instead of a mock. They read no user data and need no sign-in.
//! - [`content`]: fixed content, an error result, progress, logging, the 2020-12 schema.
//! - [`mrtr`]: the `input_required` rounds (SEP-2322) and the capability diagnostics. Their
//!   `requestState` is sealed by grantry's sealer, bound to the tool, with an expiry, so a
//!   tampered, foreign or stale state gets the same error as a sign-in state would.
//! - [`legacy`]: the legacy-era (2025-11-25) scenarios' tools that ask mid-call.

mod content;
mod legacy;
mod mrtr;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, CallToolResponse, ErrorData, InputResponses, Tool};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use super::answers::from_json;
use super::capabilities::client_capabilities;
use crate::state::AppState;

/// Every fixture, in the order `tools/list` shows them, with its description.
const FIXTURES: &[(&str, &str)] = &[
    ("test_simple_text", "Returns a simple text content item."),
    (
        "test_image_content",
        "Returns a tiny PNG image content item.",
    ),
    (
        "test_audio_content",
        "Returns a tiny WAV audio content item.",
    ),
    (
        "test_embedded_resource",
        "Returns an embedded text resource.",
    ),
    (
        "test_multiple_content_types",
        "Returns text, image and resource content together.",
    ),
    (
        "test_error_handling",
        "Always returns a tool error result (isError: true).",
    ),
    (
        "test_tool_with_progress",
        "Sends progress 0, 50 and 100 of 100, then returns.",
    ),
    (
        "test_missing_capability",
        "Needs the sampling capability; errors without it.",
    ),
    (
        "test_streaming_elicitation",
        "Asks one question through an input_required round.",
    ),
    (
        "test_logging_tool",
        "Logs one message, only when the request asks for a log level.",
    ),
    (
        content::JSON_SCHEMA_TOOL,
        "Tool with JSON Schema 2020-12 features",
    ),
    (
        "test_input_required_result_elicitation",
        "Asks for the user's name by elicitation.",
    ),
    (
        "test_input_required_result_sampling",
        "Asks the client to sample an answer.",
    ),
    (
        "test_input_required_result_list_roots",
        "Asks the client for its roots.",
    ),
    (
        "test_input_required_result_request_state",
        "Asks for a confirmation, with requestState.",
    ),
    (
        "test_input_required_result_multiple_inputs",
        "Asks for elicitation, sampling and roots at once.",
    ),
    (
        "test_input_required_result_multi_round",
        "Asks two questions in two rounds.",
    ),
    (
        "test_input_required_result_tampered_state",
        "Asks for a confirmation; refuses altered state.",
    ),
    (
        "test_input_required_result_capabilities",
        "Asks only what the client's capabilities allow.",
    ),
];

pub(super) fn tools() -> Vec<Tool> {
    FIXTURES
        .iter()
        .chain(legacy::FIXTURES)
        .map(|(name, description)| {
            let schema = if *name == content::JSON_SCHEMA_TOOL {
                content::json_schema_2020_12()
            } else {
                json!({"type": "object", "properties": {}})
            };
            from_json(json!({"name": name, "description": description, "inputSchema": schema}))
        })
        .collect()
}

pub(super) fn is_test_tool(name: &str) -> bool {
    FIXTURES.iter().any(|(fixture, _)| *fixture == name) || legacy::is_fixture(name)
}

/// What one call brings: the checked input responses, the opened state, the capabilities.
struct Round<'a> {
    tool: &'a str,
    state: &'a AppState,
    responses: InputResponses,
    claims: Option<mrtr::Claims>,
    capabilities: Value,
}

impl Round<'_> {
    /// The client's answer under `key`, if any.
    fn response(&self, key: &str) -> Option<&Value> {
        self.responses.get(key)
    }

    /// Whether the client declared capability `name` (any object counts).
    fn declares(&self, name: &str) -> bool {
        self.capabilities[name].is_object()
    }
}

pub(super) async fn call(
    params: CallToolRequestParams,
    ctx: RequestContext<RoleServer>,
    state: &AppState,
) -> Result<CallToolResponse, ErrorData> {
    let tool = params.name.as_ref();
    if legacy::is_fixture(tool) {
        let arguments = Value::Object(params.arguments.clone().unwrap_or_default());
        return legacy::call(tool, &arguments, &ctx, state.config.elicitation_timeout).await;
    }
    let responses = params.input_responses.clone().unwrap_or_default();
    // Every answer is a result object (ElicitResult, CreateMessageResult, ListRootsResult).
    if let Some((key, _)) = responses.iter().find(|(_, v)| !v.is_object()) {
        return Err(ErrorData::invalid_params(
            format!("inputResponses.{key} must be an object"),
            None,
        ));
    }
    // A presented state must open for this tool, whatever the tool does with it.
    let claims = match params.request_state.as_deref() {
        Some(sealed) => Some(mrtr::open(state, tool, sealed)?),
        None => None,
    };
    let round = Round {
        tool,
        state,
        responses,
        claims,
        capabilities: client_capabilities(&ctx),
    };
    match tool {
        t if t.starts_with("test_input_required_result_") => mrtr::call(&round),
        "test_missing_capability" | "test_streaming_elicitation" => mrtr::call(&round),
        _ => content::call(tool, &ctx).await,
    }
}
