//! `list_invoices`: the invoices of the caller's connected billing account.

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{Call, Step, ToolError, ToolOutcome, ToolResult, ToolSpec, args, finish, target};
use crate::connections::Called;
use crate::providers::StatusFilter;
use crate::providers::adapters;
use crate::providers::invoice::ApiError;

pub(crate) const NAME: &str = "list_invoices";

/// The tool as `tools/list` shows it.
pub(crate) fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "List invoices",
        description: "List invoices from the user's connected billing account (Stripe, Xero, \
                      QuickBooks, FreshBooks, Zoho Invoice, Sage, …). If no account is \
                      connected yet, the user is asked to connect one first; if several are \
                      connected at the provider and `account` names none, the user is asked \
                      which. Results come in pages: pass `next_cursor` back as `cursor` for \
                      the next one.",
        input_schema: input_schema(),
        output_schema: Some(output_schema()),
        annotations: json!({
            "title": "List invoices",
            "readOnlyHint": true,
            "openWorldHint": true
        }),
    }
}

/// What a call may pass.
fn input_schema() -> Value {
    json!({
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
                "minLength": 1,
                "maxLength": 64,
                "description": "Which connected provider to read (its id, as list_connections shows). Needed only when several are connected."
            },
            "account": target::account_property(),
            "cursor": {
                "type": "string",
                "minLength": 1,
                "maxLength": 512,
                "description": "The next_cursor of the previous page."
            }
        },
        "additionalProperties": false
    })
}

/// What a call returns: a page of invoices.
fn output_schema() -> Value {
    json!({
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
    })
}

/// The arguments, as the schema gives them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    #[serde(default)]
    pub(crate) status: StatusFilter,
    #[serde(default)]
    pub(crate) provider: Option<String>,
    #[serde(default)]
    pub(crate) account: Option<String>,
    #[serde(default)]
    pub(crate) cursor: Option<String>,
}

impl Args {
    pub(crate) fn parse(arguments: &Map<String, Value>) -> Result<Self, ToolError> {
        let parsed: Args = args::parse(NAME, arguments)?;
        if let Some(provider) = &parsed.provider {
            args::short(NAME, "provider", provider, 64)?;
        }
        if let Some(account) = &parsed.account {
            args::short(NAME, "account", account, target::MAX_ACCOUNT_LEN)?;
        }
        if let Some(cursor) = &parsed.cursor {
            args::short(NAME, "cursor", cursor, 512)?;
        }
        Ok(parsed)
    }
}

pub(crate) async fn run(call: &Call<'_>) -> Result<ToolOutcome, ToolError> {
    finish(listed(call).await, ToolOutcome::Done)
}

/// The invoices, or what stops short of them.
async fn listed(call: &Call<'_>) -> Step<ToolOutcome> {
    let args = Args::parse(call.arguments)?;
    let provider = target::provider(call, args.provider.as_deref()).await?;
    let chosen = match target::account(call, provider, args.account.as_deref()).await? {
        target::Chosen::Grant(chosen) => chosen,
        target::Chosen::Ambiguous(accounts) => {
            return Ok(ToolOutcome::ChooseAccount {
                provider: provider.id.clone(),
                accounts,
            });
        }
    };
    let services = call.services;
    let listed = services
        .connections
        .call(provider, &chosen, call.client, |token, account| {
            let args = &args;
            async move {
                let api = services.connections.api(provider, &token, account.as_ref());
                let page =
                    adapters::list_invoices(&api, args.status, args.cursor.as_deref()).await?;
                Ok((page, account))
            }
        })
        .await?;
    let doing = "invoices could not be listed";
    Ok(ToolOutcome::Done(match listed {
        Called::Done((page, account)) => ToolResult::structured(json!({
            "provider": provider.id,
            "account": account.map(|a| a.name),
            "status": args.status.as_str(),
            "invoices": page.invoices,
            "next_cursor": page.next_cursor,
        })),
        Called::SignInNeeded(reason) => {
            return Ok(ToolOutcome::NeedsConnection {
                provider: provider.id.clone(),
                reason,
            });
        }
        Called::Unavailable(after) => target::unavailable(provider, after, doing),
        Called::Failed(ApiError::BadCursor) => ToolResult::error(
            "The cursor is not a next_cursor this provider's listing gave out; list again \
             without one.",
        ),
        Called::Failed(e) => {
            tracing::warn!(provider = %provider.id, error = %e, "listing invoices failed");
            target::unavailable(provider, None, doing)
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(value: Value) -> Result<Args, ToolError> {
        Args::parse(value.as_object().unwrap())
    }

    #[test]
    fn arguments_default_and_validate() {
        assert_eq!(parse(json!({})).unwrap().status, StatusFilter::Open);
        let parsed = parse(json!({"provider": "xero", "cursor": "2"})).unwrap();
        assert_eq!(parsed.provider.as_deref(), Some("xero"));
        assert_eq!(parsed.cursor.as_deref(), Some("2"));
        assert!(parse(json!({"cursor": 2})).is_err());
        assert_eq!(
            parse(json!({"status": "all"})).unwrap().status,
            StatusFilter::All
        );
        for refused in [
            json!({"status": "unpaid"}),
            json!({"limit": 3}),
            json!({"provider": ""}),
        ] {
            assert!(
                matches!(parse(refused.clone()), Err(ToolError::InvalidArguments(_))),
                "{refused}"
            );
        }
    }
}
