//! The MCP client a call came through, for telling uses of a connection apart: the client its
//! access token was issued to, which the issuer vouches for, or else only the name the client
//! gave itself, which anyone can claim. Never identity: a connection belongs to the person.

use serde::Serialize;

use super::VerifiedClient;

/// Longest declared name kept; a client's self-description is not the place for essays.
const MAX_DECLARED: usize = 64;

/// The MCP client behind a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum McpClient {
    /// The access token's `azp` or `client_id`, checked with the token.
    Verified(String),
    /// `clientInfo.name`, as the client declared it.
    Declared(String),
}

/// An [`McpClient`] as JSON shows it: `{"client": "…", "verified": true}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct ClientView {
    pub(crate) client: String,
    pub(crate) verified: bool,
}

impl McpClient {
    /// A declared name, kept printable and short; `None` for an empty one. Direction marks
    /// go too: a name that reorders the text around it could pass for another.
    pub(crate) fn declared(name: &str) -> Option<Self> {
        let kept: String = name
            .chars()
            .filter(|c| !c.is_control() && !is_direction_mark(*c))
            .take(MAX_DECLARED)
            .collect();
        let kept = kept.trim();
        (!kept.is_empty()).then(|| Self::Declared(kept.to_owned()))
    }

    /// The client's id or name.
    pub(crate) fn name(&self) -> &str {
        match self {
            Self::Verified(id) | Self::Declared(id) => id,
        }
    }

    pub(crate) fn is_verified(&self) -> bool {
        matches!(self, Self::Verified(_))
    }

    /// The client behind a call: the one its token was issued to, else the one it declared.
    pub(crate) fn through(
        verified: Option<&VerifiedClient>,
        declared: Option<Self>,
    ) -> Option<Self> {
        match verified {
            Some(VerifiedClient(id)) => Some(Self::Verified(id.clone())),
            None => declared,
        }
    }

    /// For people and log lines: the name, marked where only the client says so.
    pub(crate) fn label(&self) -> String {
        match self {
            Self::Verified(id) => id.clone(),
            Self::Declared(name) => format!("{name} (unverified)"),
        }
    }

    pub(crate) fn view(&self) -> ClientView {
        ClientView {
            client: self.name().to_owned(),
            verified: self.is_verified(),
        }
    }

    /// As the store keeps it: `client_id:ID` or `declared:NAME`.
    pub(crate) fn stored(&self) -> String {
        match self {
            Self::Verified(id) => format!("client_id:{id}"),
            Self::Declared(name) => format!("declared:{name}"),
        }
    }

    /// Reads [`Self::stored`]; `None` for nothing recorded (or a form this version does not
    /// know).
    pub(crate) fn from_stored(text: &str) -> Option<Self> {
        if let Some(id) = text.strip_prefix("client_id:") {
            return Some(Self::Verified(id.to_owned()));
        }
        text.strip_prefix("declared:")
            .map(|name| Self::Declared(name.to_owned()))
    }
}

/// Unicode's bidirectional formatting characters (UAX #9): embeddings, overrides, isolates
/// and marks.
fn is_direction_mark(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_form_reads_back() {
        for client in [
            McpClient::Verified("claude:desktop".into()),
            McpClient::Declared("Zed".into()),
        ] {
            assert_eq!(McpClient::from_stored(&client.stored()), Some(client));
        }
        assert_eq!(McpClient::from_stored(""), None);
    }

    #[test]
    fn declared_names_are_kept_printable_short_and_marked() {
        let long = "n\u{7}ame ".repeat(40);
        let client = McpClient::declared(&long).unwrap();
        assert!(client.name().len() <= MAX_DECLARED);
        assert!(!client.name().contains('\u{7}'));
        assert_eq!(McpClient::declared("  \n "), None);
        let reordered = McpClient::declared("Claude\u{202E}tset\u{2066}").unwrap();
        assert_eq!(reordered.name(), "Claudetset");
        assert_eq!(
            McpClient::declared("Zed").unwrap().label(),
            "Zed (unverified)"
        );
        assert_eq!(McpClient::Verified("a".into()).label(), "a");
    }
}
