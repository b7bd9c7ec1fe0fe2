//! `list_invoices`: the invoices of the caller's connected billing account.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::args::{ProviderArg, Short};
use super::target::AccountArg;
use super::{Call, Step, ToolError, ToolOutcome, ToolResult, ToolSpec, finish, schema, target};
use crate::connections::Called;
use crate::ids::ProviderId;
use crate::providers::StatusFilter;
use crate::providers::adapters;
use crate::providers::invoice::{ApiError, Invoice};

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
        input_schema: schema::input::<Args>(),
        output_schema: Some(schema::output::<Page>()),
        annotations: json!({
            "title": "List invoices",
            "readOnlyHint": true,
            "openWorldHint": true
        }),
    }
}

/// The arguments, as the schema gives them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    /// Which invoices to list: open (sent, not fully paid), paid, or all.
    #[serde(default)]
    pub(crate) status: StatusFilter,
    /// Which connected provider to read (its id, as list_connections shows). Needed only
    /// when several are connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) provider: Option<ProviderArg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) account: Option<AccountArg>,
    /// The next_cursor of the previous page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<Short<512>>,
}

/// What a call returns: a page of invoices.
#[derive(Serialize, JsonSchema)]
struct Page {
    /// The provider's id, as list_connections shows it.
    provider: ProviderId,
    /// The tenant, company or business the invoices belong to.
    account: Option<String>,
    status: StatusFilter,
    invoices: Vec<Invoice>,
    /// Pass as cursor for the next page; null on the last.
    next_cursor: Option<String>,
}

pub(crate) async fn run(call: &Call<'_>, args: &Args) -> Result<ToolOutcome, ToolError> {
    finish(listed(call, args).await, ToolOutcome::Done)
}

/// The invoices, or what stops short of them.
async fn listed(call: &Call<'_>, args: &Args) -> Step<ToolOutcome> {
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
        .call(
            provider,
            &chosen,
            call.client,
            |token, account| async move {
                let api = services.connections.api(provider, &token, account.as_ref());
                let page =
                    adapters::list_invoices(&api, args.status, args.cursor.as_deref()).await?;
                Ok((page, account))
            },
        )
        .await?;
    let doing = "invoices could not be listed";
    Ok(ToolOutcome::Done(match listed {
        Called::Done((page, account)) => ToolResult::structured_from(&Page {
            provider: provider.id.clone(),
            account: account.map(|a| a.name),
            status: args.status,
            invoices: page.invoices,
            next_cursor: page.next_cursor,
        }),
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
    use serde_json::Value;

    fn parse(value: Value) -> Result<Args, ToolError> {
        crate::tools::args::parse(NAME, value.as_object().unwrap())
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
