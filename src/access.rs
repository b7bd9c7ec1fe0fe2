//! What a call does with a person's accounts: the one distinction both the MCP scopes
//! (`--oidc-*-scopes`) and the provider scopes a sign-in asks for (a catalog entry's
//! `read_scopes`, `write_scopes`) are chosen by; and scopes as the stores keep them.

/// What a tool does with a person's accounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Access {
    /// Reads invoices and connections, and starts a sign-in for them.
    #[default]
    Read,
    /// Creates or changes invoices.
    Write,
    /// Disconnects accounts.
    Manage,
}

impl Access {
    /// Whether a call with this access changes what is in the person's account at the
    /// provider (and so needs a token that may write there).
    pub(crate) fn writes_at_provider(self) -> bool {
        self == Access::Write
    }
}

/// Scopes as the stores keep them (space-separated, RFC 6749 §3.3), as a list.
pub(crate) fn scope_list(text: &str) -> Vec<String> {
    text.split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}
