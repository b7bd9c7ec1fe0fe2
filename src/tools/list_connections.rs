//! `list_connections`: which billing accounts the caller has connected. Read-only, and never
//! a token: provider, account, scopes and since when.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Call, ToolError, ToolOutcome, ToolResult, ToolSpec, args, target};

pub const NAME: &str = "list_connections";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "List connected accounts",
        description: "List the billing accounts the user has connected: provider, account, \
                      scopes and since when. Never shows a credential.",
        input_schema: json!({"type": "object", "properties": {}, "additionalProperties": false}),
        output_schema: Some(json!({
            "type": "object",
            "properties": {
                "connections": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "provider": {"type": "string"},
                            "provider_name": {"type": "string"},
                            "account": {"type": ["string", "null"]},
                            "status": {"type": "string", "enum": ["connected", "refresh_due"]},
                            "scopes": {"type": "array", "items": {"type": "string"}},
                            "connected_since": {"type": "string", "format": "date-time"}
                        },
                        "required": ["provider", "provider_name", "account", "status", "scopes", "connected_since"]
                    }
                }
            },
            "required": ["connections"]
        })),
        annotations: json!({
            "title": "List connected accounts",
            "readOnlyHint": true,
            "idempotentHint": true,
            "openWorldHint": false
        }),
    }
}

/// The arguments: none.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {}

pub async fn run(call: &Call<'_>) -> Result<ToolOutcome, ToolError> {
    let Args {} = args::parse(NAME, call.arguments)?;
    let now = crate::clock::unix_now();
    let connections: Vec<Value> = target::connected(call.state, call.principal)
        .await?
        .into_iter()
        .map(|(provider, grant)| {
            let refresh_due = grant.tokens.expires_at <= now;
            json!({
                "provider": provider.id,
                "provider_name": provider.display_name,
                "account": grant.tokens.account.map(|a| a.name),
                "status": if refresh_due { "refresh_due" } else { "connected" },
                "scopes": grant.tokens.scopes,
                "connected_since": rfc3339(grant.created_at),
            })
        })
        .collect();
    Ok(ToolOutcome::Done(ToolResult::structured(
        json!({ "connections": connections }),
    )))
}

fn rfc3339(unix: i64) -> String {
    time::OffsetDateTime::from_unix_timestamp(unix)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}
