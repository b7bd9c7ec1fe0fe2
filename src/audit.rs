//! Audit events: who (a principal tag), which provider, which flow (hashed), what happened.
//! Written to the log under the target `grantry::audit`; never a token, code, cookie or secret.

use crate::identity::{McpClient, Principal};
use crate::ids::ProviderId;
use crate::seal::digest;

/// The subjects of one event; unset fields are left out of the line.
#[derive(Default, Clone, Copy)]
pub(crate) struct Audit<'a> {
    pub(crate) principal: Option<&'a Principal>,
    pub(crate) provider: Option<&'a ProviderId>,
    /// A raw flow id; only its hash is written.
    pub(crate) flow_id: Option<&'a str>,
    /// The MCP client a connection was used through.
    pub(crate) client: Option<&'a McpClient>,
}

impl Audit<'_> {
    /// Something worth keeping a record of (a sign-in started, a grant stored).
    pub(crate) fn notice(&self, event: &'static str, detail: &str) {
        let (principal, provider, flow) = self.fields();
        let client = self.client.map(McpClient::label).unwrap_or_default();
        tracing::info!(target: "grantry::audit", event, principal, provider, flow, client, detail, "audit");
    }

    /// Something that may be an attack (an identity mismatch, a reused state).
    pub(crate) fn alarm(&self, event: &'static str, detail: &str) {
        let (principal, provider, flow) = self.fields();
        let client = self.client.map(McpClient::label).unwrap_or_default();
        tracing::warn!(target: "grantry::audit", event, principal, provider, flow, client, detail, "security event");
    }

    fn fields(&self) -> (String, String, String) {
        (
            self.principal.map(|p| p.tag().into()).unwrap_or_default(),
            self.provider.map(ProviderId::to_string).unwrap_or_default(),
            self.flow_id
                .map(|id| digest("grantry/flow-id/v1", &[id.as_bytes()]))
                .unwrap_or_default(),
        )
    }
}
