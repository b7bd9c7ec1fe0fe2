//! `create_invoice` and `void_invoice`: their specs, and the provider calls behind them. The
//! `mcp` layer runs their rounds: a form for missing or invalid fields (create), a
//! confirmation before anything is voided (void).

use serde_json::{Map, Value, json};

use super::access::{Access, access_token};
use super::{ToolError, ToolResult, ToolSpec, invoice_draft};
use crate::grants::GrantKey;
use crate::identity::Principal;
use crate::providers::adapters::{self, Api};
use crate::providers::invoice::{ApiError, Invoice, NewInvoice, decimal};
use crate::providers::{Account, Provider};
use crate::state::AppState;

pub const CREATE: &str = "create_invoice";
pub const VOID: &str = "void_invoice";

pub fn create_spec() -> ToolSpec {
    let mut schema = invoice_draft::input_schema();
    // Missing fields are asked for, not refused: the schema lists them without requiring.
    schema
        .as_object_mut()
        .expect("an object schema")
        .remove("required");
    schema["properties"]["provider"] = json!({"type": "string",
        "description": "Which connected provider to create it at; needed only when several are connected."});
    ToolSpec {
        name: CREATE,
        title: "Create an invoice",
        description: "Create an invoice in the user's connected billing account. Give what you \
                      know; anything missing or invalid is asked of the user in a form (or, \
                      from a client that cannot ask, named in the error so you can correct it).",
        input_schema: schema,
        output_schema: None,
        annotations: json!({
            "title": "Create an invoice",
            "readOnlyHint": false,
            "destructiveHint": false,
            "idempotentHint": false,
            "openWorldHint": true
        }),
    }
}

pub fn void_spec() -> ToolSpec {
    ToolSpec {
        name: VOID,
        title: "Void an invoice",
        description: "Void an invoice in the user's connected billing account. The user is \
                      asked to confirm first; nothing is voided without that confirmation.",
        input_schema: json!({
            "type": "object",
            "properties": {
                "invoice_id": {"type": "string", "description": "The invoice's id, as list_invoices shows it."},
                "provider": {"type": "string", "description": "Needed only when several accounts are connected."}
            },
            "required": ["invoice_id"],
            "additionalProperties": false
        }),
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

/// The provider a write goes to, and a usable token for it; or the answer when there is none.
pub struct Target<'a> {
    pub provider: &'a Provider,
    token: String,
    account: Option<Account>,
}

impl Target<'_> {
    fn api<'b>(&'b self, state: &'b AppState) -> Api<'b> {
        Api {
            http: &state.http,
            in_process: state.in_process_api.as_ref(),
            provider: self.provider,
            access_token: &self.token,
            account: self.account.as_ref(),
        }
    }
}

pub async fn target<'a>(
    state: &'a AppState,
    principal: &Principal,
    arguments: &Map<String, Value>,
) -> Result<Result<Target<'a>, ToolResult>, ToolError> {
    let named = match arguments.get("provider") {
        None => None,
        Some(Value::String(id)) => Some(id.as_str()),
        Some(_) => {
            return Err(ToolError::InvalidArguments(
                "provider must be a string".into(),
            ));
        }
    };
    let provider = match super::list_invoices::choose_provider(state, principal, named).await? {
        Ok(provider) => provider,
        Err(result) => return Ok(Err(result)),
    };
    let key = GrantKey {
        principal: principal.clone(),
        provider: provider.id.clone(),
    };
    Ok(match access_token(state, provider, &key).await? {
        Access::Token { token, account, .. } => Ok(Target {
            provider,
            token,
            account,
        }),
        Access::SignInNeeded => Err(ToolResult::error(format!(
            "No {} account is connected. Call list_invoices first: it asks the user to \
             connect one.",
            provider.display_name
        ))),
        Access::Unavailable(_) => Err(busy(provider)),
    })
}

fn busy(provider: &Provider) -> ToolResult {
    ToolResult::error(format!(
        "{} is not answering right now; nothing was changed. Try again in a minute.",
        provider.display_name
    ))
}

fn summary(invoice: &Invoice) -> String {
    format!(
        "{} for {} ({} {})",
        invoice.number,
        invoice.customer,
        decimal(invoice.amount_minor, &invoice.currency),
        invoice.currency
    )
}

/// Creates the validated invoice; a repeated `idempotency_key` creates nothing new.
pub async fn create(
    state: &AppState,
    target: &Target<'_>,
    new: &NewInvoice,
    idempotency_key: &str,
) -> ToolResult {
    match adapters::create_invoice(&target.api(state), new, idempotency_key).await {
        Ok(invoice) => {
            let mut result = ToolResult::structured(json!({
                "provider": target.provider.id,
                "invoice": invoice,
            }));
            result.text = format!("Created invoice {}.", summary(&invoice));
            result
        }
        Err(ApiError::Unsupported) => ToolResult::error(format!(
            "grantry cannot create invoices at {} yet; nothing was created.",
            target.provider.display_name
        )),
        Err(e) => {
            tracing::warn!(provider = %target.provider.id, error = %e, "creating an invoice failed");
            ToolResult::error(format!(
                "{} did not create the invoice ({e}). Nothing was created; try again.",
                target.provider.display_name
            ))
        }
    }
}

/// The invoice to void, for the confirmation to name; or the final answer.
pub async fn find(
    state: &AppState,
    target: &Target<'_>,
    invoice_id: &str,
) -> Result<Invoice, ToolResult> {
    match adapters::get_invoice(&target.api(state), invoice_id).await {
        Ok(invoice) => Ok(invoice),
        Err(ApiError::NotFound) => Err(ToolResult::error(format!(
            "There is no invoice {invoice_id} in this {} account.",
            target.provider.display_name
        ))),
        Err(ApiError::Unsupported) => Err(ToolResult::error(format!(
            "grantry cannot void invoices at {} yet; nothing was changed.",
            target.provider.display_name
        ))),
        Err(e) => {
            tracing::warn!(provider = %target.provider.id, error = %e, "reading an invoice failed");
            Err(busy(target.provider))
        }
    }
}

/// The question the user must confirm before `invoice` is voided.
pub fn void_question(invoice: &Invoice) -> String {
    format!(
        "Void invoice {}? Voiding cannot be undone: the invoice stays on record as void and \
         can no longer be paid.",
        summary(invoice)
    )
}

/// Voids the invoice the user confirmed.
pub async fn void(state: &AppState, target: &Target<'_>, invoice_id: &str) -> ToolResult {
    match adapters::void_invoice(&target.api(state), invoice_id).await {
        Ok(invoice) => {
            let mut result = ToolResult::structured(json!({
                "provider": target.provider.id,
                "invoice": invoice,
            }));
            result.text = format!("Voided invoice {}.", summary(&invoice));
            result
        }
        Err(ApiError::Rejected(_)) => ToolResult::error(
            "The provider refused to void this invoice (a paid invoice cannot be voided); \
             nothing was changed.",
        ),
        Err(ApiError::NotFound) => ToolResult::error("That invoice no longer exists."),
        Err(e) => {
            tracing::warn!(provider = %target.provider.id, error = %e, "voiding an invoice failed");
            ToolResult::error(format!(
                "{} did not confirm the void ({e}); check the invoice before trying again.",
                target.provider.display_name
            ))
        }
    }
}
