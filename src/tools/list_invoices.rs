//! `list_invoices`: the invoices of the caller's connected billing account.

use serde_json::{Map, Value, json};

use super::access::{Access, access_token, forget, refresh};
use super::{ToolError, ToolOutcome, ToolResult, ToolSpec};
use crate::grants::GrantKey;
use crate::identity::Principal;
use crate::providers::adapters::{self, Api};
use crate::providers::invoice::ApiError;
use crate::providers::{Provider, StatusFilter};
use crate::state::AppState;

pub const NAME: &str = "list_invoices";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "List invoices",
        description: "List invoices from the user's connected billing account (Stripe, Xero, \
                      QuickBooks, FreshBooks, Zoho Invoice, Sage, …). If no account is \
                      connected yet, the user is asked to connect one first. Results come in \
                      pages: pass `next_cursor` back as `cursor` for the next one.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "status": {
                    "type": "string",
                    "enum": ["open", "paid", "all"],
                    "default": "open",
                    "description": "Which invoices to list: open (sent, not fully paid), paid, or all."
                },
                "provider": {
                    "type": "string",
                    "description": "Which connected provider to read (its id, as list_connections shows). Needed only when several are connected."
                },
                "cursor": {
                    "type": "string",
                    "description": "The next_cursor of the previous page."
                }
            },
            "additionalProperties": false
        }),
        output_schema: Some(json!({
            "type": "object",
            "properties": {
                "provider": {"type": "string"},
                "account": {"type": ["string", "null"], "description": "The tenant, company or business the invoices belong to."},
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
                            "status": {"type": "string", "enum": ["draft", "open", "paid", "void", "uncollectible"]},
                            "issue_date": {"type": "string", "format": "date"},
                            "due_date": {"type": ["string", "null"], "format": "date"}
                        },
                        "required": ["id", "number", "customer", "amount_minor", "currency", "status", "issue_date", "due_date"]
                    }
                },
                "next_cursor": {"type": ["string", "null"], "description": "Pass as cursor for the next page; null on the last."}
            },
            "required": ["provider", "status", "invoices", "next_cursor"]
        })),
        annotations: json!({
            "title": "List invoices",
            "readOnlyHint": true,
            "openWorldHint": true
        }),
    }
}

/// Validated arguments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Args {
    pub status: StatusFilter,
    pub provider: Option<String>,
    pub cursor: Option<String>,
}

impl Args {
    pub fn parse(arguments: &Map<String, Value>) -> Result<Self, ToolError> {
        let mut args = Args::default();
        let text = |name: &str, value: &Value| {
            value
                .as_str()
                .filter(|s| !s.is_empty() && s.len() <= 512)
                .map(str::to_owned)
                .ok_or_else(|| {
                    ToolError::InvalidArguments(format!("{name} must be a non-empty string"))
                })
        };
        for (name, value) in arguments {
            match name.as_str() {
                "status" => {
                    args.status = serde_json::from_value(value.clone()).map_err(|_| {
                        ToolError::InvalidArguments(
                            "status must be one of \"open\", \"paid\" or \"all\"".into(),
                        )
                    })?;
                }
                "provider" => args.provider = Some(text(name, value)?),
                "cursor" => args.cursor = Some(text(name, value)?),
                other => {
                    return Err(ToolError::InvalidArguments(format!(
                        "unknown argument `{other}`; list_invoices takes status, provider and cursor"
                    )));
                }
            }
        }
        Ok(args)
    }
}

pub async fn run(
    state: &AppState,
    principal: &Principal,
    args: Args,
) -> Result<ToolOutcome, ToolError> {
    let provider = match choose_provider(state, principal, args.provider.as_deref()).await? {
        Ok(provider) => provider,
        Err(result) => return Ok(ToolOutcome::Done(result)),
    };
    let key = GrantKey {
        principal: principal.clone(),
        provider: provider.id.clone(),
    };
    // A 401 gets one refresh and one retry; a grant rewritten meanwhile gets one more try.
    let mut refreshed_after_401 = false;
    for _attempt in 0..3 {
        let (token, account, version) = match access_token(state, provider, &key).await? {
            Access::Token {
                token,
                account,
                version,
            } => (token, account, version),
            Access::SignInNeeded => {
                return Ok(ToolOutcome::NeedsConnection {
                    provider: provider.id.clone(),
                });
            }
            Access::Unavailable(_) => {
                return Ok(ToolOutcome::Done(unavailable(&provider.display_name, None)));
            }
        };
        let api = Api {
            http: &state.http,
            in_process: state.in_process_api.as_ref(),
            provider,
            access_token: &token,
            account: account.as_ref(),
        };
        match adapters::list_invoices(&api, args.status, args.cursor.as_deref()).await {
            Ok(page) => {
                return Ok(ToolOutcome::Done(ToolResult::structured(json!({
                    "provider": provider.id,
                    "account": account.map(|a| a.name),
                    "status": args.status.as_str(),
                    "invoices": page.invoices,
                    "next_cursor": page.next_cursor,
                }))));
            }
            // The provider no longer takes the token before its expiry: refresh once.
            Err(ApiError::Unauthorized) if !refreshed_after_401 => {
                refreshed_after_401 = true;
                let Some(grant) = state.grants.get(&key).await? else {
                    continue;
                };
                if grant.version != version {
                    continue; // someone refreshed since our token was refused: use theirs
                }
                if let Access::Unavailable(_) = refresh(state, provider, &key, grant).await? {
                    return Ok(ToolOutcome::Done(unavailable(&provider.display_name, None)));
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
            // Access denied to this account (a disconnected tenant, a missing scope): a new
            // sign-in is the way out, and the old grant must go or the wait for a new one
            // would end at once on it.
            Err(ApiError::Forbidden) => {
                tracing::warn!(provider = %provider.id, "the provider refused access; asking to connect again");
                if let Access::SignInNeeded = forget(state, &key, version).await? {
                    return Ok(ToolOutcome::NeedsConnection {
                        provider: provider.id.clone(),
                    });
                }
            }
            Err(ApiError::BadCursor) => {
                return Err(ToolError::InvalidArguments(
                    "cursor is not a next_cursor this provider's listing gave out".into(),
                ));
            }
            Err(ApiError::Busy {
                retry_after_secs, ..
            }) => {
                return Ok(ToolOutcome::Done(unavailable(
                    &provider.display_name,
                    Some(retry_after_secs),
                )));
            }
            Err(e) => {
                tracing::warn!(provider = %provider.id, error = %e, "listing invoices failed");
                return Ok(ToolOutcome::Done(unavailable(&provider.display_name, None)));
            }
        }
    }
    tracing::warn!(provider = %provider.id, "the provider keeps refusing fresh tokens");
    Ok(ToolOutcome::Done(unavailable(&provider.display_name, None)))
}

/// The provider to read: the one named; else the only one connected; else the catalog's
/// default (the caller will be asked to connect it). Several connected and none named is a
/// question for the caller, answered as a tool error naming them.
pub(crate) async fn choose_provider<'a>(
    state: &'a AppState,
    principal: &Principal,
    named: Option<&str>,
) -> Result<Result<&'a Provider, ToolResult>, ToolError> {
    if let Some(id) = named {
        return match state.catalog.get(id) {
            Some(provider) => Ok(Ok(provider)),
            None => Err(ToolError::InvalidArguments(format!(
                "provider `{id}` is not offered here; offered: {}",
                state
                    .catalog
                    .all()
                    .map(|p| p.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        };
    }
    // One provider offered (the usual deployment): nothing to choose, and no need to read
    // every grant of the caller on each call.
    if state.catalog.all().nth(1).is_none() {
        return Ok(Ok(state.catalog.default_provider()));
    }
    let connected = super::connections::connected(state, principal).await?;
    match connected.as_slice() {
        [] => Ok(Ok(state.catalog.default_provider())),
        [(provider, _)] => Ok(Ok(provider)),
        several => Ok(Err(ToolResult::error(format!(
            "Several billing accounts are connected ({}); say which one with `provider`.",
            several
                .iter()
                .map(|(p, _)| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )))),
    }
}

/// A retryable tool error: the provider is busy or failing.
fn unavailable(display_name: &str, retry_after_secs: Option<u64>) -> ToolResult {
    let when = match retry_after_secs {
        Some(secs) => format!("try again in {secs} seconds"),
        None => "try again in a minute".into(),
    };
    ToolResult::error(format!(
        "{display_name} is not answering right now, so invoices could not be listed. \
         This is temporary: {when}."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_default_and_validate() {
        assert_eq!(Args::parse(&Map::new()).unwrap().status, StatusFilter::Open);
        let mut named = Map::new();
        named.insert("provider".into(), json!("xero"));
        named.insert("cursor".into(), json!("2"));
        let parsed = Args::parse(&named).unwrap();
        assert_eq!(parsed.provider.as_deref(), Some("xero"));
        assert_eq!(parsed.cursor.as_deref(), Some("2"));
        named.insert("cursor".into(), json!(2));
        assert!(Args::parse(&named).is_err());
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
