//! The fixtures of the suite's legacy-era (2025-11-25) scenarios: tools that ask the client
//! mid-call, with `sampling/createMessage` or `elicitation/create` on the call's stream. They
//! exist only in a legacy session; the modern era asks through `input_required` instead.

use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, ErrorCode, ErrorData};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use super::super::answers::{complete, from_json};
use super::super::legacy;
use crate::tools::ToolResult;

/// The fixtures, with their descriptions.
pub(super) const FIXTURES: &[(&str, &str)] = &[
    (
        "test_sampling",
        "Legacy era: asks the client to sample a reply to `prompt`.",
    ),
    (
        "test_elicitation",
        "Legacy era: asks the user for a username and an email.",
    ),
    (
        "test_elicitation_sep1034_defaults",
        "Legacy era: asks with a default for every primitive type.",
    ),
    (
        "test_elicitation_sep1330_enums",
        "Legacy era: asks with every enum schema variant.",
    ),
];

pub(super) fn is_fixture(name: &str) -> bool {
    FIXTURES.iter().any(|(fixture, _)| *fixture == name)
}

pub(super) async fn call(
    tool: &str,
    arguments: &Value,
    ctx: &RequestContext<RoleServer>,
    timeout: std::time::Duration,
) -> Result<CallToolResponse, ErrorData> {
    if !legacy::is_legacy(ctx) {
        return Err(ErrorData::invalid_params(
            format!("{tool} asks mid-call, which only a legacy-era (2025-11-25) session allows"),
            None,
        ));
    }
    if tool == "test_sampling" {
        return sample(arguments, ctx).await;
    }
    let (message, schema) = match tool {
        "test_elicitation" => (
            arguments["message"]
                .as_str()
                .unwrap_or("Please answer")
                .to_owned(),
            json!({
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            }),
        ),
        "test_elicitation_sep1034_defaults" => ("Check the defaults".to_owned(), defaults()),
        _ => ("Pick the options".to_owned(), enums()),
    };
    let ask = from_json(json!({"mode": "form", "message": message, "requestedSchema": schema}));
    let answer = ctx
        .peer
        .create_elicitation_with_timeout(ask, Some(timeout))
        .await
        .map_err(failed)?;
    let answer = serde_json::to_value(answer).map_err(failed)?;
    let text = match tool {
        "test_elicitation" => format!("User response: {answer}"),
        _ => format!(
            "Elicitation completed: action={}, content={}",
            answer["action"].as_str().unwrap_or_default(),
            answer["content"]
        ),
    };
    Ok(complete(ToolResult::text(text)))
}

async fn sample(
    arguments: &Value,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let prompt = arguments["prompt"].as_str().unwrap_or("Say hello");
    let ask = from_json(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": 100,
    }));
    // Sampling is deprecated from 2026-07-28 on (SEP-2577); the 2025-11-25 scenario asks for it.
    #[expect(deprecated, reason = "the 2025-11-25 scenario asks for sampling")]
    let answer = ctx.peer.create_message(ask).await.map_err(failed)?;
    let answer = serde_json::to_value(answer).map_err(failed)?;
    let reply = answer["content"]["text"].as_str().unwrap_or_default();
    Ok(complete(ToolResult::text(format!("LLM response: {reply}"))))
}

/// SEP-1034: a default for each primitive type.
fn defaults() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
        },
    })
}

/// SEP-1330: the five enum schema variants.
fn enums() -> Value {
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"},
            ]}},
        },
    })
}

fn failed(e: impl std::fmt::Display) -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!("the client's answer could not be had: {e}"),
        None,
    )
}
