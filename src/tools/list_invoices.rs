//! `list_invoices`: the invoices of the caller's connected billing account.

use serde_json::{Map, Value, json};

use super::access::{Access, access_token, forget, refresh};
use super::{ToolError, ToolOutcome, ToolResult, ToolSpec};
use crate::grants::GrantKey;
use crate::identity::Principal;
use crate::providers::catalog::AdapterKind;
use crate::providers::invoice::ApiError;
use crate::providers::{StatusFilter, demo_adapter};
use crate::state::AppState;

pub const NAME: &str = "list_invoices";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "List invoices",
        description: "List invoices from the user's connected billing account. If no account \
                      is connected yet, the user is asked to connect one first.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "status": {
                    "type": "string",
                    "enum": ["open", "paid", "all"],
                    "default": "open",
                    "description": "Which invoices to list."
                }
            },
            "additionalProperties": false
        }),
        output_schema: Some(json!({
            "type": "object",
            "properties": {
                "provider": {"type": "string"},
                "status": {"type": "string", "enum": ["open", "paid", "all"]},
                "invoices": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "number": {"type": "string"},
                            "customer": {"type": "string"},
                            "amount_minor": {"type": "integer", "description": "Total in the currency's minor unit (cents)."},
                            "currency": {"type": "string", "description": "ISO 4217 code."},
                            "status": {"type": "string", "enum": ["open", "paid"]},
                            "issue_date": {"type": "string", "format": "date"},
                            "due_date": {"type": ["string", "null"], "format": "date"}
                        },
                        "required": ["id", "number", "customer", "amount_minor", "currency", "status", "issue_date", "due_date"]
                    }
                }
            },
            "required": ["provider", "status", "invoices"]
        })),
        annotations: json!({
            "title": "List invoices",
            "readOnlyHint": true,
            "openWorldHint": true
        }),
    }
}

/// Validated arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Args {
    pub status: StatusFilter,
}

impl Args {
    pub fn parse(arguments: &Map<String, Value>) -> Result<Self, ToolError> {
        let mut status = StatusFilter::default();
        for (name, value) in arguments {
            match name.as_str() {
                "status" => {
                    status = serde_json::from_value(value.clone()).map_err(|_| {
                        ToolError::InvalidArguments(
                            "status must be one of \"open\", \"paid\" or \"all\"".into(),
                        )
                    })?;
                }
                other => {
                    return Err(ToolError::InvalidArguments(format!(
                        "unknown argument `{other}`; list_invoices takes only `status`"
                    )));
                }
            }
        }
        Ok(Self { status })
    }
}

pub async fn run(
    state: &AppState,
    principal: &Principal,
    args: Args,
) -> Result<ToolOutcome, ToolError> {
    let provider = state.catalog.default_provider();
    let key = GrantKey {
        principal: principal.clone(),
        provider: provider.id.clone(),
    };
    // A 401 gets one refresh and one retry; a grant rewritten meanwhile gets one more try.
    let mut refreshed_after_401 = false;
    for _attempt in 0..3 {
        let (token, version) = match access_token(state, provider, &key).await? {
            Access::Token { token, version } => (token, version),
            Access::SignInNeeded => {
                return Ok(ToolOutcome::NeedsConnection {
                    provider: provider.id.clone(),
                });
            }
            Access::Unavailable(_) => {
                return Ok(ToolOutcome::Done(unavailable(&provider.display_name)));
            }
        };
        let listed = match provider.adapter {
            AdapterKind::Demo => {
                demo_adapter::list_invoices(&state.http, provider, &token, args.status).await
            }
        };
        match listed {
            Ok(invoices) => {
                return Ok(ToolOutcome::Done(ToolResult::structured(json!({
                    "provider": provider.id,
                    "status": args.status.as_str(),
                    "invoices": invoices,
                }))));
            }
            // The provider no longer takes the token before its expiry: refresh once.
            Err(ApiError::Unauthorized) if !refreshed_after_401 => {
                refreshed_after_401 = true;
                let Some(grant) = state.grants.get(&key).await? else {
                    continue;
                };
                if let Access::Unavailable(_) = refresh(state, provider, &key, grant).await? {
                    return Ok(ToolOutcome::Done(unavailable(&provider.display_name)));
                }
            }
            // Refused even after a refresh: the grant is dead (unless it changed meanwhile).
            Err(ApiError::Unauthorized) => {
                if let Access::SignInNeeded = forget(state, &key, version).await? {
                    return Ok(ToolOutcome::NeedsConnection {
                        provider: provider.id.clone(),
                    });
                }
            }
            Err(e) => {
                tracing::warn!(provider = %provider.id, error = %e, "listing invoices failed");
                return Ok(ToolOutcome::Done(unavailable(&provider.display_name)));
            }
        }
    }
    tracing::warn!(provider = %provider.id, "the provider keeps refusing fresh tokens");
    Ok(ToolOutcome::Done(unavailable(&provider.display_name)))
}

fn unavailable(display_name: &str) -> ToolResult {
    ToolResult::error(format!(
        "{display_name} is not answering right now, so invoices could not be listed. \
         This is temporary: try again in a minute."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_default_and_validate() {
        assert_eq!(Args::parse(&Map::new()).unwrap().status, StatusFilter::Open);
        let mut m = Map::new();
        m.insert("status".into(), json!("all"));
        assert_eq!(Args::parse(&m).unwrap().status, StatusFilter::All);
        m.insert("status".into(), json!("unpaid"));
        assert!(matches!(
            Args::parse(&m),
            Err(ToolError::InvalidArguments(_))
        ));
        let mut extra = Map::new();
        extra.insert("limit".into(), json!(3));
        assert!(matches!(
            Args::parse(&extra),
            Err(ToolError::InvalidArguments(_))
        ));
    }
}
