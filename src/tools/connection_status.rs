//! `connection_status`: the caller's connections at one provider, for the connect card to poll
//! until the person's sign-in lands. App-only: hosts hide it from the model. It answers for
//! the caller alone, like every tool: the card cannot choose whose connections it reads.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;

use super::connect_account::{Args, CardConnection, connections_at, provider};
use super::{Call, Step, ToolError, ToolOutcome, ToolResult, ToolSpec, finish, schema};
use crate::ids::ProviderId;

pub(crate) const NAME: &str = "connection_status";

pub(crate) fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        title: "Connection status",
        description: "The user's connections at one billing provider, for the connect card \
                      (connect_account) to notice a sign-in. Read-only; never a credential.",
        input_schema: schema::input::<Args>(),
        output_schema: Some(schema::output::<Status>()),
        annotations: json!({
            "title": "Connection status",
            "readOnlyHint": true,
            "idempotentHint": true,
            "openWorldHint": false
        }),
    }
}

/// The person's connections at one provider.
#[derive(Serialize, JsonSchema)]
struct Status {
    /// The provider's id.
    provider: ProviderId,
    connections: Vec<CardConnection>,
}

pub(crate) async fn run(call: &Call<'_>, args: &Args) -> Result<ToolOutcome, ToolError> {
    finish(status(call, args).await, ToolOutcome::Done)
}

async fn status(call: &Call<'_>, args: &Args) -> Step<ToolOutcome> {
    let provider = provider(call, args).await?;
    let connections = connections_at(call, provider).await?;
    Ok(ToolOutcome::Done(ToolResult::structured_from(&Status {
        provider: provider.id.clone(),
        connections,
    })))
}
