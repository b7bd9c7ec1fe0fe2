//! `disconnect_account`: remove a connection, only after the user confirmed it (the `mcp`
//! layer asks, and calls [`ConfirmTool::execute`] only on an explicit yes).
//!
//! The removal and revocation are [`crate::connections::Connections::disconnect`]'s, shared with the connections page;
//! the result says honestly whether the provider could be told.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::args::ProviderArg;
use super::target::AccountArg;
use super::{
    Call, ConfirmTool, Prepared, Question, Step, Stop, Subject, ToolError, ToolResult, ToolSpec,
    finish, schema, target,
};
use crate::connections::EndedBy;
use crate::grants::GrantKey;
use crate::providers::Provider;

pub(crate) const NAME: &str = "disconnect_account";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "Disconnect a billing account",
        description: "Remove the user's connection to a billing provider and revoke grantry's \
                      access there. The user is asked to confirm first; nothing is removed \
                      without that confirmation.",
        input_schema: schema::input::<Args>(),
        output_schema: None,
        annotations: json!({
            "title": "Disconnect a billing account",
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
    /// The provider id, as list_connections shows it.
    pub(super) provider: ProviderArg,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) account: Option<AccountArg>,
}

impl Args {
    /// The provider named, if it is offered here, and which of the caller's grants there;
    /// otherwise the answer saying what is wrong.
    async fn target<'a>(&self, call: &Call<'a>) -> Step<(&'a Provider, GrantKey)> {
        let Some(provider) = call.services.catalog.get(&self.provider) else {
            return Err(Stop::Answer(ToolResult::error(format!(
                "The provider `{}` is not offered here.",
                self.provider
            ))));
        };
        let chosen = target::account_or_refusal(call, provider, self.account.as_deref()).await?;
        Ok((provider, chosen.key))
    }

    /// The question naming the connection, or the answer that there is none to remove.
    async fn question(&self, call: &Call<'_>) -> Step<Prepared> {
        let (provider, key) = self.target(call).await?;
        let Some(grant) = call.services.connections.grant(&key).await? else {
            return Ok(Prepared::Done(ToolResult::text(format!(
                "No {} account is connected, so there is nothing to disconnect.",
                provider.display_name
            ))));
        };
        let which = match &grant.tokens.account {
            Some(account) => format!("{} ({})", provider.display_name, account.name),
            None => provider.display_name.clone(),
        };
        let (lang, brand) = (call.services.language, call.services.brand);
        let name = provider.display_name.as_str();
        Ok(Prepared::Ask(Question {
            // Which connection: a reconnection since is another one.
            subject: Subject {
                provider: provider.id.clone(),
                account: key.account.clone(),
                what: grant.signed_in_at().to_string(),
            },
            title: lang.t_with("disconnect-question-title", &[("provider", name)]),
            message: lang.t_with(
                if provider.key_form().is_some() {
                    "disconnect-key-question"
                } else {
                    "disconnect-question"
                },
                &[("name", &which), ("provider", name), ("brand", brand)],
            ),
        }))
    }

    /// Removes the connection the person confirmed, then revokes it at the provider.
    async fn remove(&self, call: &Call<'_>, subject: &Subject) -> Step<ToolResult> {
        let (provider, key) = self.target(call).await?;
        if provider.id != subject.provider || key.account != subject.account {
            return Err(confirmed_elsewhere().into());
        }
        let connected_at = subject.what.parse().unwrap_or_default();
        let done = call
            .services
            .connections
            .disconnect(&key, provider, connected_at, EndedBy::Person)
            .await?;
        let services = call.services;
        let message = done.message(services.language, services.brand, &provider.display_name);
        Ok(if done.removed() {
            ToolResult::text(message)
        } else {
            ToolResult::error(message)
        })
    }
}

#[async_trait]
impl ConfirmTool for Args {
    async fn prepare(&self, call: &Call<'_>) -> Result<Prepared, ToolError> {
        finish(self.question(call).await, Prepared::Done)
    }

    /// Removes the connection the user confirmed, then revokes it at the provider.
    async fn execute(&self, call: &Call<'_>, subject: &Subject) -> Result<ToolResult, ToolError> {
        finish(self.remove(call, subject).await, |answer| answer)
    }

    fn cancelled(&self) -> ToolResult {
        ToolResult::text("Disconnect cancelled; nothing was removed.")
    }
}

/// A yes given to a question about something else than this call would now act on.
pub(super) fn confirmed_elsewhere() -> ToolError {
    ToolError::InvalidArguments("the confirmation was given for something else".into())
}
