//! The tools grantry offers, independent of JSON-RPC: each takes typed arguments and answers
//! with a [`ToolOutcome`]. A tool that needs an account the caller has not connected says so
//! ([`ToolOutcome::NeedsConnection`]); the `mcp` layer turns that into a sign-in request.

pub mod access;
pub mod connections;
pub mod disconnect;
pub mod invoice_draft;
pub mod invoices_write;
pub mod list_invoices;

use serde_json::{Map, Value};

use crate::identity::Principal;
use crate::state::AppState;

/// How a tool presents itself in `tools/list`.
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Value,
}

/// A finished tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// Text for the model (for structured results, the JSON itself).
    pub text: String,
    pub structured: Option<Value>,
    pub is_error: bool,
}

impl ToolResult {
    pub fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            structured: None,
            is_error: true,
        }
    }

    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            structured: None,
            is_error: false,
        }
    }

    pub fn structured(value: Value) -> Self {
        Self {
            text: value.to_string(),
            structured: Some(value),
            is_error: false,
        }
    }
}

/// What a call came to.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    Done(ToolResult),
    /// The caller has no usable grant for this provider: a sign-in is needed.
    NeedsConnection {
        provider: String,
    },
}

/// A call that cannot be served as asked.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("unknown tool: {0}")]
    UnknownTool(String),
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    #[error("store unavailable")]
    Store(#[from] crate::store::StoreError),
}

/// Everything grantry's own tools offer, in a stable order.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        list_invoices::spec(),
        connections::spec(),
        disconnect::spec(),
        invoices_write::create_spec(),
        invoices_write::void_spec(),
    ]
}

/// The names of [`specs`], without building the schemas (checked on every call).
const NAMES: [&str; 5] = [
    list_invoices::NAME,
    connections::NAME,
    disconnect::NAME,
    invoices_write::CREATE,
    invoices_write::VOID,
];

/// Whether `name` is one of grantry's own tools.
pub fn exists(name: &str) -> bool {
    NAMES.contains(&name)
}

/// Runs one of grantry's own tools for `principal`.
pub async fn call(
    state: &AppState,
    principal: &Principal,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<ToolOutcome, ToolError> {
    match name {
        list_invoices::NAME => {
            let args = list_invoices::Args::parse(arguments)?;
            list_invoices::run(state, principal, args).await
        }
        connections::NAME => {
            if let Some(name) = arguments.keys().next() {
                return Err(ToolError::InvalidArguments(format!(
                    "unknown argument `{name}`; list_connections takes none"
                )));
            }
            Ok(connections::run(state, principal).await?)
        }
        // These run only through their rounds in the mcp layer (confirmation, form).
        disconnect::NAME | invoices_write::VOID | invoices_write::CREATE => Err(
            ToolError::InvalidArguments(format!("{name} runs only through its rounds")),
        ),
        other => Err(ToolError::UnknownTool(other.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_name_list_matches_the_specs() {
        let specs: Vec<&str> = super::specs().into_iter().map(|s| s.name).collect();
        assert_eq!(specs, super::NAMES);
    }
}
