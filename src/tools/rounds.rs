//! The two kinds of tools with rounds, as the `mcp` layer drives them. A tool says what to
//! ask and what to do; the rounds themselves (sealing the state between them, binding it to
//! the caller and the arguments, asking by `input_required` or `elicitation/create`) are the
//! `mcp` layer's.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Call, ToolError, ToolResult};
use crate::ids::{AccountId, ProviderId};
use crate::ui::Lang;

/// A tool that changes something only after the user has answered a confirmation with an
/// explicit yes (`accept` with `confirm: true`); anything else changes nothing.
#[async_trait]
pub(crate) trait ConfirmTool: Sync {
    /// The first round: what to ask, or the answer without asking (nothing to do).
    async fn prepare(&self, call: &Call<'_>) -> Result<Prepared, ToolError>;
    /// After a yes to the question about `subject` (which the state between the rounds bound
    /// to this caller and these arguments): does it.
    async fn execute(&self, call: &Call<'_>, subject: &Subject) -> Result<ToolResult, ToolError>;
    /// The answer to anything but an explicit yes.
    fn cancelled(&self) -> ToolResult;
}

/// What a confirming tool's first round came to.
pub(crate) enum Prepared {
    Ask(Question),
    Done(ToolResult),
}

/// The confirmation to ask for.
pub(crate) struct Question {
    pub(crate) subject: Subject,
    /// The checkbox's label ("Void invoice DEMO-N0001").
    pub(crate) title: String,
    /// What exactly will happen, and that it cannot be undone.
    pub(crate) message: String,
}

/// Exactly what is confirmed: the provider, the account there (`""` where it has none), and
/// which thing in it (a connection's creation time, an invoice id). Carried sealed from the
/// question to the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Subject {
    #[serde(rename = "v")]
    pub(crate) provider: ProviderId,
    #[serde(rename = "w", default, with = "crate::ids::account_or_empty")]
    pub(crate) account: Option<AccountId>,
    #[serde(rename = "s")]
    pub(crate) what: String,
}

/// A tool that does not fail on missing or invalid fields: it asks for exactly those, as
/// many rounds as needed, keeping the valid ones.
#[async_trait]
pub(crate) trait FormTool: Sync {
    /// The key of its form among a round's `inputRequests` (and of the answer).
    fn request_key(&self) -> &'static str;
    /// One field's JSON Schema as a form asks for it, with its `title` in `lang`.
    fn field_schema(&self, field: &str, lang: Lang) -> Value;
    /// Whether a form may leave `field` empty.
    fn optional(&self, field: &str) -> bool;
    /// The fields the call gave, as a form keeps them (the validator judges them).
    fn values(&self) -> Map<String, Value>;
    /// Before anything is asked: the answer when the call cannot go anywhere (no account
    /// connected), so nobody fills in a form for nothing.
    async fn precheck(&self, call: &Call<'_>) -> Result<Option<ToolResult>, ToolError>;
    /// One try with the values so far: done (or refused by the provider), or what is wrong.
    /// A retried last round passes the same `idempotency_key`, so nothing is done twice.
    async fn attempt(
        &self,
        call: &Call<'_>,
        values: &Map<String, Value>,
        idempotency_key: &str,
    ) -> Result<Attempt, ToolError>;
    /// What the form says above the fields it asks for, in `lang` (`brand`: the deployment's
    /// name).
    fn form_message(&self, problems: &[Problem], lang: Lang, brand: &str) -> String;
    /// The answer for a client that cannot show a form: each problem named.
    fn without_form(&self, problems: &[Problem]) -> ToolResult;
    /// The answer to a declined or cancelled form.
    fn cancelled(&self) -> ToolResult;
}

/// What one try of a form tool came to.
pub(crate) enum Attempt {
    Done(ToolResult),
    Problems(Vec<Problem>),
}

/// What is wrong with one field: the catalog key of its words for a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) field: &'static str,
    pub(crate) message: &'static str,
}

impl Problem {
    /// Its words, in `lang`.
    pub(crate) fn text(&self, lang: Lang) -> String {
        lang.t(self.message)
    }
}
