//! The fixtures that answer at once: fixed content, an error result, progress and logging.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, ErrorData, ProgressNotificationParam};
use rmcp::service::RequestContext;
use serde_json::{Value, json};

use super::super::answers::{complete, from_json};
use crate::tools::ToolResult;

pub(super) const JSON_SCHEMA_TOOL: &str = "json_schema_2020_12_tool";

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV of two silent 16-bit mono samples at 8 kHz.
const WAV: &str = "UklGRigAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQQAAAAAAAAA";
/// Pause between progress notifications.
const PROGRESS_STEP: Duration = Duration::from_millis(50);

/// The input schema the json-schema-2020-12 scenario expects back verbatim.
pub(super) fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

pub(super) async fn call(
    tool: &str,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let image = json!({"type": "image", "data": PNG, "mimeType": "image/png"});
    let content = match tool {
        "test_simple_text" => return Ok(text("This is a simple text response for testing.")),
        "test_error_handling" => {
            return Ok(complete(ToolResult::error(
                "This tool intentionally returns an error for testing",
            )));
        }
        "test_tool_with_progress" => return Ok(with_progress(ctx).await),
        "test_logging_tool" => return Ok(logging(ctx).await),
        JSON_SCHEMA_TOOL => return Ok(text("ok")),
        "test_image_content" => json!([image]),
        "test_audio_content" => json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]),
        "test_embedded_resource" => json!([{"type": "resource", "resource": {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        }}]),
        "test_multiple_content_types" => json!([
            {"type": "text", "text": "Multiple content types test:"},
            image,
            {"type": "resource", "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": "{\"test\":\"data\",\"value\":123}",
            }},
        ]),
        other => {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {other}"),
                None,
            ));
        }
    };
    Ok(CallToolResponse::Complete(from_json(
        json!({"resultType": "complete", "content": content}),
    )))
}

fn text(text: &str) -> CallToolResponse {
    complete(ToolResult {
        text: text.to_owned(),
        structured: None,
        is_error: false,
    })
}

/// Progress 0, 50, 100 of 100 to the request's `progressToken` (none without one). The first
/// notification turns rmcp's JSON answer into an SSE stream that ends with the result.
async fn with_progress(ctx: &RequestContext<RoleServer>) -> CallToolResponse {
    let token = ctx.meta.get_progress_token();
    for progress in [0.0, 50.0, 100.0] {
        if let Some(token) = &token {
            let note = ProgressNotificationParam::new(token.clone(), progress).with_total(100.0);
            if let Err(e) = ctx.peer.notify_progress(note).await {
                tracing::debug!(error = %e, "progress notification not delivered");
            }
        }
        tokio::time::sleep(PROGRESS_STEP).await;
    }
    text("Progress test completed.")
}

/// Logs one `info` message, and only when the request's `_meta` asks for `info` or lower:
/// without a log level a 2026-07-28 server sends no `notifications/message`.
#[expect(
    deprecated,
    reason = "logging is deprecated by SEP-2577 but still in 2026-07-28"
)]
async fn logging(ctx: &RequestContext<RoleServer>) -> CallToolResponse {
    use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
    if let Some(LoggingLevel::Debug | LoggingLevel::Info) = ctx.meta.log_level() {
        let note = LoggingMessageNotificationParam::new(
            LoggingLevel::Info,
            json!("test_logging_tool ran"),
        );
        if let Err(e) = ctx.peer.notify_logging_message(note).await {
            tracing::debug!(error = %e, "log notification not delivered");
        }
    }
    text("Logging test completed.")
}
