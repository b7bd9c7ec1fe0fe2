//! A call's arguments, read once at the edge into its tool's own `Args` ([`Arguments`]). The
//! rounds carry this value; each tool takes its `Args` from it as a parameter (a plain tool)
//! or as the value its rounds are driven on (a [`ConfirmTool`] or [`FormTool`]). Nothing
//! after the edge reads the JSON it came from.
//!
//! Its wire form ([`Arguments::to_wire`]) reads back to the same value: it is what a round's
//! state binds the arguments by, and what a task keeps of its call.

use serde::Serialize;
use serde_json::{Map, Value};

use super::{
    Call, ConfirmTool, FormTool, Tool, ToolError, ToolOutcome, args, connect_account,
    connection_status, create_invoice, disconnect_account, list_connections, list_invoices,
    void_invoice,
};

/// One call's arguments, of the tool they were read for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arguments {
    ListInvoices(list_invoices::Args),
    ListConnections(list_connections::Args),
    DisconnectAccount(disconnect_account::Args),
    CreateInvoice(create_invoice::Args),
    VoidInvoice(void_invoice::Args),
    ConnectAccount(connect_account::Args),
    ConnectionStatus(connect_account::Args),
}

/// How a call runs, and on what.
#[derive(Clone, Copy)]
pub(crate) enum Mode<'a> {
    /// At once; a missing connection is a sign-in round.
    Plain,
    /// After the user confirmed, in a form-mode round.
    Confirm(&'a dyn ConfirmTool),
    /// Asking for the fields its validator rejects, in form-mode rounds.
    Form(&'a dyn FormTool),
}

impl Arguments {
    /// `wire` (a `tools/call`'s `arguments`) read as `tool`'s: what does not fit its schema
    /// is an invalid-arguments error naming the argument.
    pub(crate) fn read(tool: Tool, wire: &Map<String, Value>) -> Result<Self, ToolError> {
        let name = tool.name();
        Ok(match tool {
            Tool::ListInvoices => Self::ListInvoices(args::parse(name, wire)?),
            Tool::ListConnections => Self::ListConnections(args::parse(name, wire)?),
            Tool::DisconnectAccount => Self::DisconnectAccount(args::parse(name, wire)?),
            Tool::CreateInvoice => Self::CreateInvoice(args::parse(name, wire)?),
            Tool::VoidInvoice => Self::VoidInvoice(args::parse(name, wire)?),
            Tool::ConnectAccount => Self::ConnectAccount(args::parse(name, wire)?),
            Tool::ConnectionStatus => Self::ConnectionStatus(args::parse(name, wire)?),
        })
    }

    /// The tool they are for.
    pub(crate) fn tool(&self) -> Tool {
        match self {
            Self::ListInvoices(_) => Tool::ListInvoices,
            Self::ListConnections(_) => Tool::ListConnections,
            Self::DisconnectAccount(_) => Tool::DisconnectAccount,
            Self::CreateInvoice(_) => Tool::CreateInvoice,
            Self::VoidInvoice(_) => Tool::VoidInvoice,
            Self::ConnectAccount(_) => Tool::ConnectAccount,
            Self::ConnectionStatus(_) => Tool::ConnectionStatus,
        }
    }

    /// The provider and the account the client named, for the rounds that look at the
    /// connection before the tool runs (which account? may it write?).
    pub(crate) fn target(&self) -> (Option<&str>, Option<&str>) {
        match self {
            Self::ListInvoices(a) => (a.provider.as_deref(), a.account.as_deref()),
            Self::DisconnectAccount(a) => (Some(&a.provider), a.account.as_deref()),
            Self::CreateInvoice(a) => (a.provider.as_deref(), a.account.as_deref()),
            Self::VoidInvoice(a) => (a.provider.as_deref(), a.account.as_deref()),
            Self::ConnectAccount(a) | Self::ConnectionStatus(a) => (a.provider.as_deref(), None),
            Self::ListConnections(_) => (None, None),
        }
    }

    /// How the call runs: a confirming or form tool's rounds are driven on its arguments.
    pub(crate) fn mode(&self) -> Mode<'_> {
        match self {
            Self::DisconnectAccount(args) => Mode::Confirm(args),
            Self::VoidInvoice(args) => Mode::Confirm(args),
            Self::CreateInvoice(args) => Mode::Form(args),
            _ => Mode::Plain,
        }
    }

    /// Runs a plain tool; a tool with rounds is refused (the `mcp` layer drives those).
    pub(crate) async fn run(&self, call: &Call<'_>) -> Result<ToolOutcome, ToolError> {
        match self {
            Self::ListInvoices(args) => list_invoices::run(call, args).await,
            Self::ListConnections(args) => list_connections::run(call, args).await,
            Self::ConnectAccount(args) => connect_account::run(call, args).await,
            Self::ConnectionStatus(args) => connection_status::run(call, args).await,
            Self::DisconnectAccount(_) | Self::VoidInvoice(_) | Self::CreateInvoice(_) => {
                Err(ToolError::InvalidArguments(format!(
                    "{} runs only through its rounds",
                    self.tool().name()
                )))
            }
        }
    }

    /// As a `tools/call` would carry them; [`Arguments::read`] reads them back to the same.
    pub(crate) fn to_wire(&self) -> Map<String, Value> {
        match self {
            Self::ListInvoices(a) => wire(a),
            Self::ListConnections(a) => wire(a),
            Self::DisconnectAccount(a) => wire(a),
            Self::CreateInvoice(a) => wire(a),
            Self::VoidInvoice(a) => wire(a),
            Self::ConnectAccount(a) | Self::ConnectionStatus(a) => wire(a),
        }
    }
}

fn wire(args: &impl Serialize) -> Map<String, Value> {
    // Structs of strings, numbers and JSON values: serializing them cannot fail, and gives
    // an object.
    match serde_json::to_value(args).expect("arguments serialize") {
        Value::Object(map) => map,
        other => unreachable!("arguments serialize to an object, not {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(tool: Tool, value: Value) -> Arguments {
        Arguments::read(tool, value.as_object().unwrap()).unwrap()
    }

    #[test]
    fn the_wire_form_reads_back_to_the_same_arguments() {
        let calls = [
            (Tool::ListInvoices, json!({})),
            (
                Tool::ListInvoices,
                json!({"status": "paid", "provider": "xero", "account": "Acme", "cursor": "c2"}),
            ),
            (Tool::ListConnections, json!({})),
            (
                Tool::DisconnectAccount,
                json!({"provider": "demo", "account": "a1"}),
            ),
            (Tool::CreateInvoice, json!({})),
            (
                Tool::CreateInvoice,
                json!({"provider": "demo", "amount": "12x", "email": 7, "due_date": null}),
            ),
            (
                Tool::VoidInvoice,
                json!({"invoice_id": "in_1", "provider": "demo"}),
            ),
            (Tool::ConnectAccount, json!({"provider": "demo"})),
            (Tool::ConnectionStatus, json!({})),
        ];
        for (tool, value) in calls {
            let arguments = read(tool, value.clone());
            assert_eq!(arguments.tool(), tool);
            let again = Arguments::read(tool, &arguments.to_wire()).unwrap();
            assert_eq!(again, arguments, "{value}");
        }
    }

    #[test]
    fn the_target_is_what_the_client_named() {
        let named = read(
            Tool::VoidInvoice,
            json!({"invoice_id": "i", "account": "Acme"}),
        );
        assert_eq!(named.target(), (None, Some("Acme")));
        let disconnect = read(Tool::DisconnectAccount, json!({"provider": "demo"}));
        assert_eq!(disconnect.target(), (Some("demo"), None));
        let draft = read(
            Tool::CreateInvoice,
            json!({"provider": "demo", "amount": 3}),
        );
        assert_eq!(draft.target(), (Some("demo"), None));
    }

    #[test]
    fn arguments_of_another_tool_are_refused_at_reading() {
        let wire = json!({"invoice_id": "in_1"});
        let refused = Arguments::read(Tool::ListInvoices, wire.as_object().unwrap());
        assert!(
            matches!(&refused, Err(ToolError::InvalidArguments(m)) if m.contains("invoice_id")),
            "{refused:?}"
        );
    }
}
