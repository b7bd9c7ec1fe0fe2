//! Who is calling: the principal `(issuer, subject)` behind an MCP request or a browser.
//!
//! Identity comes only from validated credentials, never from `clientInfo`, arguments, `_meta`
//! or a URL. In `dev` mode there is one local user for every request and browser; grantry
//! refuses to run it on a non-loopback address (see `config`).

use serde::{Deserialize, Serialize};

use crate::config::IdentityMode;
use crate::seal::digest;

/// The issuer of the single `dev` principal.
pub const DEV_ISSUER: &str = "urn:grantry:dev";
/// The subject of the single `dev` principal.
pub const DEV_SUBJECT: &str = "local-user";

/// An authenticated user: an issuer and a subject at that issuer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Principal {
    pub issuer: String,
    pub subject: String,
}

impl Principal {
    /// A stable, non-reversible tag for this principal, safe to seal, log or compare.
    pub fn tag(&self) -> String {
        digest(
            "grantry/principal/v1",
            &[self.issuer.as_bytes(), self.subject.as_bytes()],
        )
    }
}

/// Resolves principals for MCP requests and browsers.
#[derive(Debug, Clone)]
pub struct Identity {
    mode: IdentityMode,
}

impl Identity {
    pub fn new(mode: IdentityMode) -> Self {
        Self { mode }
    }

    /// The principal behind an MCP request.
    pub fn mcp_principal(&self, _headers: &http::HeaderMap) -> Option<Principal> {
        match self.mode {
            IdentityMode::Dev => Some(dev_principal()),
            IdentityMode::Oidc => None,
        }
    }

    /// The principal of the person at the browser.
    pub fn browser_principal(&self, _headers: &http::HeaderMap) -> Option<Principal> {
        match self.mode {
            IdentityMode::Dev => Some(dev_principal()),
            IdentityMode::Oidc => None,
        }
    }
}

fn dev_principal() -> Principal {
    Principal {
        issuer: DEV_ISSUER.to_owned(),
        subject: DEV_SUBJECT.to_owned(),
    }
}
