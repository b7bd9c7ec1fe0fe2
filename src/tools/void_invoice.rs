//! `void_invoice`: a confirming tool. Nothing is voided until the user has answered the
//! confirmation naming the invoice (number, customer, amount) with an explicit yes.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::args::{ProviderArg, Short};
use super::disconnect_account::confirmed_elsewhere;
use super::target::AccountArg;
use super::{
    Call, ConfirmTool, Prepared, Question, Step, Stop, Subject, ToolError, ToolResult, ToolSpec,
    finish, schema, target,
};
use crate::connections::Called;
use crate::connections::ChosenGrant;
use crate::providers::Provider;
use crate::providers::adapters;
use crate::providers::invoice::{ApiError, Invoice, InvoiceStatus};

pub(crate) const NAME: &str = "void_invoice";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "Void an invoice",
        description: "Void an invoice in the user's connected billing account. The user is \
                      asked to confirm first; nothing is voided without that confirmation.",
        input_schema: schema::input::<Args>(),
        output_schema: None,
        annotations: json!({
            "title": "Void an invoice",
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": true,
            "openWorldHint": true
        }),
    }
}

/// The arguments, as the schema gives them: the confirming tool its rounds are driven on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    /// The invoice's id, as list_invoices shows it.
    invoice_id: Short<255>,
    /// Needed only when several providers are connected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) provider: Option<ProviderArg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) account: Option<AccountArg>,
}

/// Which invoice at which provider, or the answer when there is none to act on.
struct Target<'a> {
    provider: &'a Provider,
    grant: ChosenGrant,
    invoice_id: String,
}

impl Args {
    async fn target<'a>(&self, call: &Call<'a>) -> Step<Target<'a>> {
        let provider = target::provider(call, self.provider.as_deref()).await?;
        let grant = target::account_or_refusal(call, provider, self.account.as_deref()).await?;
        Ok(Target {
            provider,
            grant,
            invoice_id: self.invoice_id.to_string(),
        })
    }

    /// Reads (`void: false`) or voids the invoice, through the provider-call loop; the answer
    /// when it cannot.
    async fn with_invoice(call: &Call<'_>, target: &Target<'_>, void: bool) -> Step<Invoice> {
        let (services, provider, id) = (call.services, target.provider, &target.invoice_id);
        let called = services
            .connections
            .call(
                provider,
                &target.grant,
                call.client,
                |token, account| async move {
                    let api = services.connections.api(provider, &token, account.as_ref());
                    if void {
                        adapters::void_invoice(&api, id).await
                    } else {
                        adapters::get_invoice(&api, id).await
                    }
                },
            )
            .await?;
        let answer = match called {
            Called::Done(invoice) => return Ok(invoice),
            Called::SignInNeeded(why) => target::not_connected(services.brand, provider, why),
            Called::Unavailable(after) => {
                target::unavailable(provider, after, "nothing was changed")
            }
            Called::Failed(ApiError::NotFound) => ToolResult::error(format!(
                "There is no invoice {} in this {} account.",
                target.invoice_id, provider.display_name
            )),
            Called::Failed(ApiError::Unsupported) => ToolResult::error(format!(
                "grantry cannot void invoices at {} yet; nothing was changed.",
                provider.display_name
            )),
            Called::Failed(ApiError::Rejected(_)) => ToolResult::error(
                "The provider refused to void this invoice (a paid invoice cannot be voided); \
                 nothing was changed.",
            ),
            Called::Failed(e) => {
                tracing::warn!(provider = %provider.id, error = %e, "an invoice call failed");
                ToolResult::error(format!(
                    "{} did not answer as expected ({e}); check the invoice before trying again.",
                    provider.display_name
                ))
            }
        };
        Err(Stop::Answer(answer))
    }
}

#[async_trait]
impl ConfirmTool for Args {
    async fn prepare(&self, call: &Call<'_>) -> Result<Prepared, ToolError> {
        finish(self.question(call).await, Prepared::Done)
    }

    async fn execute(&self, call: &Call<'_>, subject: &Subject) -> Result<ToolResult, ToolError> {
        finish(self.void(call, subject).await, |answer| answer)
    }

    fn cancelled(&self) -> ToolResult {
        ToolResult::text("Void cancelled; nothing was changed.")
    }
}

impl Args {
    /// The question naming the invoice, or the answer that there is none to void.
    async fn question(&self, call: &Call<'_>) -> Step<Prepared> {
        let target = self.target(call).await?;
        let invoice = Self::with_invoice(call, &target, false).await?;
        if invoice.status == InvoiceStatus::Void {
            return Ok(Prepared::Done(ToolResult::text(format!(
                "Invoice {} is already void; nothing to do.",
                invoice.number
            ))));
        }
        let lang = call.services.language;
        Ok(Prepared::Ask(Question {
            subject: Subject {
                provider: target.provider.id.clone(),
                account: target.grant.key.account.clone(),
                what: target.invoice_id,
            },
            title: lang.t_with("mcp-void-title", &[("number", &invoice.number)]),
            message: lang.t_with("mcp-void-question", &[("invoice", &invoice.summary())]),
        }))
    }

    /// Voids the invoice the person confirmed.
    async fn void(&self, call: &Call<'_>, subject: &Subject) -> Step<ToolResult> {
        let target = self.target(call).await?;
        // At the same account too: invoice ids repeat across a provider's companies.
        if target.provider.id != subject.provider
            || target.grant.key.account != subject.account
            || target.invoice_id != subject.what
        {
            return Err(confirmed_elsewhere().into());
        }
        // A yes acts once: a confirmation sent again (a client retrying a lost answer, a
        // replay) finds the invoice void and changes nothing more.
        let invoice = Self::with_invoice(call, &target, false).await?;
        if invoice.status == InvoiceStatus::Void {
            return Ok(ToolResult::text(format!(
                "Invoice {} is already void; nothing was changed.",
                invoice.number
            )));
        }
        let invoice = Self::with_invoice(call, &target, true).await?;
        let mut result = ToolResult::structured(json!({
            "provider": target.provider.id,
            "invoice": invoice,
        }));
        result.text = format!("Voided invoice {}.", invoice.summary());
        Ok(result)
    }
}
