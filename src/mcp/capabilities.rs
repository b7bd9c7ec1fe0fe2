//! What the client declared it can do: per request in the modern era (`_meta`), once at
//! `initialize` in a legacy-era session.

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use serde_json::Value;

/// The raw `clientCapabilities` of this request; in a legacy-era session, those its
/// `initialize` declared.
pub(super) fn client_capabilities(ctx: &RequestContext<RoleServer>) -> Value {
    match ctx
        .meta
        .0
        .0
        .get("io.modelcontextprotocol/clientCapabilities")
    {
        Some(capabilities) => capabilities.clone(),
        None => ctx
            .client_capabilities()
            .and_then(|c| serde_json::to_value(c).ok())
            .unwrap_or(Value::Null),
    }
}

/// Form elicitation is declared as `elicitation.form`, or by an `elicitation` object naming no
/// mode at all (the spec reads that as form mode).
pub(super) fn declares_form_elicitation(capabilities: &Value) -> bool {
    let elicitation = &capabilities["elicitation"];
    let names_no_mode = elicitation.get("form").is_none() && elicitation.get("url").is_none();
    elicitation["form"].is_object() || (elicitation.is_object() && names_no_mode)
}

/// URL elicitation is declared only by naming it: `elicitation.url`.
pub(super) fn declares_url_elicitation(capabilities: &Value) -> bool {
    capabilities["elicitation"]["url"].is_object()
}
