//! The tools grantry offers, independent of JSON-RPC, and their registry ([`Tool`]).
//!
//! A tool is one file. Each has a spec (what `tools/list` shows) and a [`Mode`]: a plain tool
//! runs at once and answers with a [`ToolOutcome`] (which may say a sign-in is needed); a
//! confirming tool ([`ConfirmTool`]) changes something only after the user said yes; a form
//! tool ([`FormTool`]) asks for exactly the fields its validator rejects. The `mcp` layer
//! drives the rounds of each mode and knows no tool by name.
//!
//! Arguments are read once, at the edge, into the tool's `Args` ([`Arguments`]; serde, unknown
//! ones refused: [`args`]): a call whose arguments do not fit the schema is a protocol error
//! (`-32602`); a value that fits but cannot be used (a provider not offered, a cursor from
//! elsewhere) is a tool error the model can correct. The schemas `tools/list` shows are
//! derived from the same types ([`schema`]): the `Args` a tool reads and the answer it gives.

pub(crate) mod args;
mod arguments;
pub(crate) mod connect_account;
pub(crate) mod connection_status;
pub(crate) mod create_invoice;
pub(crate) mod disconnect_account;
pub(crate) mod invoice_draft;
pub(crate) mod list_connections;
pub(crate) mod list_invoices;
mod rounds;
pub(crate) mod schema;
pub(crate) mod target;
pub(crate) mod void_invoice;

pub(crate) use arguments::{Arguments, Mode};
pub(crate) use rounds::{Attempt, ConfirmTool, FormTool, Prepared, Problem, Question, Subject};

use serde_json::Value;

use crate::access::Access;
use crate::config::PublicUrl;
use crate::connections::Connections;
use crate::identity::{McpClient, Principal};
use crate::providers::{Catalog, ProviderId};
use crate::ui::Lang;

/// One of grantry's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tool {
    ListInvoices,
    ListConnections,
    DisconnectAccount,
    CreateInvoice,
    VoidInvoice,
    ConnectAccount,
    ConnectionStatus,
}

/// A tool's part in the connect card, for hosts that render MCP Apps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CardPart {
    /// None: a tool of its own.
    None,
    /// Its result is shown in the card (`connect_account`).
    Shows,
    /// The card calls it; the model does not (`connection_status`).
    CalledByCard,
}

impl Tool {
    /// Every tool, in the order `tools/list` shows them.
    pub(crate) const ALL: [Tool; 7] = [
        Tool::ListInvoices,
        Tool::ListConnections,
        Tool::DisconnectAccount,
        Tool::CreateInvoice,
        Tool::VoidInvoice,
        Tool::ConnectAccount,
        Tool::ConnectionStatus,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Tool::ListInvoices => list_invoices::NAME,
            Tool::ListConnections => list_connections::NAME,
            Tool::DisconnectAccount => disconnect_account::NAME,
            Tool::CreateInvoice => create_invoice::NAME,
            Tool::VoidInvoice => void_invoice::NAME,
            Tool::ConnectAccount => connect_account::NAME,
            Tool::ConnectionStatus => connection_status::NAME,
        }
    }

    /// What the tool does with a person's accounts (which scopes a call of it needs).
    pub(crate) fn access(self) -> Access {
        match self {
            Tool::ListInvoices
            | Tool::ListConnections
            | Tool::ConnectAccount
            | Tool::ConnectionStatus => Access::Read,
            Tool::CreateInvoice | Tool::VoidInvoice => Access::Write,
            Tool::DisconnectAccount => Access::Manage,
        }
    }

    /// The arguments a client mirrors into request headers (SEP-2243 `x-mcp-header`), with
    /// the header's name after `Mcp-Param-`: the provider, so a balancer can route or limit
    /// by it without reading bodies. Never a sensitive argument.
    pub(crate) fn mirrored(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Tool::ListConnections => &[],
            _ => &[("provider", "Provider")],
        }
    }

    /// Its part in the connect card.
    pub(crate) fn card_part(self) -> CardPart {
        match self {
            Tool::ConnectAccount => CardPart::Shows,
            Tool::ConnectionStatus => CardPart::CalledByCard,
            _ => CardPart::None,
        }
    }

    /// What `tools/list` shows, the mirrored arguments annotated in the input schema.
    pub(crate) fn spec(self) -> ToolSpec {
        let mut spec = match self {
            Tool::ListInvoices => list_invoices::spec(),
            Tool::ListConnections => list_connections::spec(),
            Tool::DisconnectAccount => disconnect_account::spec(),
            Tool::CreateInvoice => create_invoice::spec(),
            Tool::VoidInvoice => void_invoice::spec(),
            Tool::ConnectAccount => connect_account::spec(),
            Tool::ConnectionStatus => connection_status::spec(),
        };
        for (argument, header) in self.mirrored() {
            spec.input_schema["properties"][*argument]["x-mcp-header"] = (*header).into();
        }
        spec
    }

    /// Whether `tools/list` shows an output schema for it: then every answer that is not a
    /// tool error carries structured content. Asked on a call's answer, so not derived from
    /// [`Tool::spec`] each time (a unit test holds the two alike).
    pub(crate) fn has_output_schema(self) -> bool {
        matches!(
            self,
            Tool::ListInvoices
                | Tool::ListConnections
                | Tool::ConnectAccount
                | Tool::ConnectionStatus
        )
    }
}

/// What a tool may use besides its call: the connections service (the only way to a
/// person's grants and their provider), the catalog, and how grantry presents itself. Lent
/// by the protocol layer for each call; a tool reaches nothing else of the process.
#[derive(Clone, Copy)]
pub(crate) struct Services<'a> {
    pub(crate) connections: &'a Connections,
    pub(crate) catalog: &'a Catalog,
    /// The language of what a person reads (a confirmation's question, a form's message).
    pub(crate) language: Lang,
    /// The deployment's name, as people know it.
    pub(crate) brand: &'a str,
    /// Where grantry's own pages are (`/connections`, for a person to manage what they
    /// connected).
    pub(crate) public_url: &'a PublicUrl,
}

/// One call: who, with which arguments, on what.
#[derive(Clone, Copy)]
pub(crate) struct Call<'a> {
    pub(crate) services: Services<'a>,
    pub(crate) principal: &'a Principal,
    /// The MCP client it came through, recorded with each use of a connection.
    pub(crate) client: Option<&'a McpClient>,
    /// As the client sent them, read into the tool's type.
    pub(crate) arguments: &'a Arguments,
    /// The account the person chose in an earlier round (which account?): where set, it
    /// stands in for the `account` the client named.
    pub(crate) chosen_account: Option<&'a crate::ids::AccountId>,
}

/// How a tool presents itself in `tools/list`.
pub(crate) struct ToolSpec {
    pub(crate) name: &'static str,
    pub(crate) title: &'static str,
    pub(crate) description: &'static str,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) annotations: Value,
}

/// A finished tool call.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ToolResult {
    /// Text for the model (for structured results, the JSON itself).
    pub(crate) text: String,
    pub(crate) structured: Option<Value>,
    pub(crate) is_error: bool,
}

impl ToolResult {
    pub(crate) fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            structured: None,
            is_error: true,
        }
    }

    pub(crate) fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            structured: None,
            is_error: false,
        }
    }

    pub(crate) fn structured(value: Value) -> Self {
        Self {
            text: value.to_string(),
            structured: Some(value),
            is_error: false,
        }
    }

    /// `answer` as structured content: one of the types a tool's output schema is derived
    /// from ([`schema::output`]).
    pub(crate) fn structured_from(answer: &impl serde::Serialize) -> Self {
        // Plain structs with string keys: serializing them to a `Value` cannot fail.
        let value = serde_json::to_value(answer).expect("an answer serializes");
        Self::structured(value)
    }
}

/// What a call came to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ToolOutcome {
    Done(ToolResult),
    /// The caller has no usable grant for this provider: a sign-in is needed.
    NeedsConnection {
        provider: ProviderId,
        /// Why the connection there can no longer be used (`None`: there is none).
        reason: Option<crate::grants::ReauthReason>,
    },
    /// Several accounts are connected at this provider and the call named none: the person is
    /// asked which (the call is run again with it as `account`), or the caller told.
    ChooseAccount {
        provider: ProviderId,
        accounts: Vec<crate::connections::Choosable>,
    },
    /// The connect card for `provider`, with where its connections stand (`result`): the
    /// protocol adds the connect link and binds the result to the card.
    ShowCard {
        provider: ProviderId,
        result: ToolResult,
    },
}

/// Where a tool stops short of its work: with an answer for the model (what it can correct,
/// or that there is nothing to do), or with an error the protocol reports.
#[derive(Debug)]
pub(crate) enum Stop {
    Answer(ToolResult),
    Failed(ToolError),
}

/// A tool's work up to where it may stop.
pub(crate) type Step<T> = Result<T, Stop>;

impl From<ToolError> for Stop {
    fn from(error: ToolError) -> Self {
        Self::Failed(error)
    }
}

impl From<crate::store::StoreError> for Stop {
    fn from(error: crate::store::StoreError) -> Self {
        Self::Failed(ToolError::Store(error))
    }
}

/// The end of a step: its value, or the answer it stopped with as `answered` makes it.
pub(crate) fn finish<T>(
    step: Step<T>,
    answered: impl FnOnce(ToolResult) -> T,
) -> Result<T, ToolError> {
    step.or_else(|stop| match stop {
        Stop::Answer(result) => Ok(answered(result)),
        Stop::Failed(error) => Err(error),
    })
}

/// A step's value, or `None` where it stopped with an answer (the caller has none to give).
pub(crate) fn unless_answered<T>(step: Step<T>) -> Result<Option<T>, ToolError> {
    finish(step.map(Some), |_| None)
}

/// A call that cannot be served as asked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    #[error("unknown tool: {0}")]
    UnknownTool(String),
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    #[error("store unavailable")]
    Store(#[from] crate::store::StoreError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_a_name_of_its_own_and_its_spec_carries_it() {
        let mut names: Vec<&str> = Tool::ALL.iter().map(|tool| tool.name()).collect();
        for tool in Tool::ALL {
            assert_eq!(tool.spec().name, tool.name());
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Tool::ALL.len());
    }

    #[test]
    fn a_tool_has_an_output_schema_exactly_where_it_says_so() {
        for tool in Tool::ALL {
            let listed = tool.spec().output_schema.is_some();
            assert_eq!(tool.has_output_schema(), listed, "{}", tool.name());
        }
    }

    #[test]
    fn the_provider_argument_is_mirrored_into_a_header_where_a_tool_takes_one() {
        for tool in Tool::ALL {
            let spec = tool.spec();
            let provider = &spec.input_schema["properties"]["provider"];
            match tool.mirrored() {
                [] => assert!(provider.is_null(), "{}", tool.name()),
                _ => assert_eq!(provider["x-mcp-header"], "Provider", "{}", tool.name()),
            }
        }
    }
}
