//! Who is calling: the principal `(issuer, subject)` behind an MCP request or a browser.
//!
//! Identity comes only from validated credentials, never from `clientInfo`, arguments, `_meta`
//! or a URL. In `dev` mode there is one local user for every request and browser; grantry
//! refuses to run it on a non-loopback address (see `config`). In `oidc` mode an MCP request
//! carries a bearer token from the configured issuer ([`oidc`]) and a browser carries a
//! [`session`] cookie from a login at that issuer.

mod client;
pub mod oidc;
pub mod session;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::config::{Config, IdentityMode};
use crate::seal::{Sealer, digest};
pub(crate) use client::{ClientView, McpClient};
pub(crate) use oidc::{BearerError, DiscoveryError, Oidc};

/// The issuer of the single `dev` principal.
pub const DEV_ISSUER: &str = "urn:grantry:dev";
/// The subject of the single `dev` principal.
pub const DEV_SUBJECT: &str = "local-user";

/// Whether a person stands behind an MCP request's credentials. Only a person can open a
/// sign-in link or answer a form; a token issued to a client itself (client credentials, a
/// scheduled agent) has none, and is never sent either.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Presence {
    #[default]
    Person,
    NoPerson,
}

/// Who is behind an MCP request: the principal, whether a person is there, and what their
/// token may do.
#[derive(Debug, Clone)]
pub(crate) struct McpCaller {
    pub(crate) principal: Principal,
    pub(crate) presence: Presence,
    /// The scopes the access token holds; `None` where identity grants none (`dev`).
    pub(crate) scopes: Option<GrantedScopes>,
    /// The client the token was issued to, as the issuer vouched (`None` in `dev`, or where
    /// the token names none).
    pub(crate) client: Option<VerifiedClient>,
}

/// The id of the client an access token was issued to (`azp`, else `client_id`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct VerifiedClient(pub String);

/// The scopes an MCP access token was granted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GrantedScopes(pub Vec<String>);

impl GrantedScopes {
    /// Whether every scope of `needed` was granted.
    pub(crate) fn include(&self, needed: &[String]) -> bool {
        needed.iter().all(|scope| self.0.contains(scope))
    }
}

/// An authenticated user: an issuer and a subject at that issuer.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Principal {
    pub issuer: String,
    pub subject: String,
}

impl Principal {
    /// A stable, non-reversible tag for this principal, safe to seal, log or compare.
    pub fn tag(&self) -> PrincipalTag {
        PrincipalTag(digest(
            "grantry/principal/v1",
            &[self.issuer.as_bytes(), self.subject.as_bytes()],
        ))
    }

    /// The principal, unambiguously, for the rate limiter: it hashes what it stores (once per
    /// window and caller), so hashing here too on every request ([`Principal::tag`]) would
    /// only cost time.
    pub(crate) fn limiter_id(&self) -> Vec<u8> {
        let (issuer, subject) = (self.issuer.as_bytes(), self.subject.as_bytes());
        let mut id = Vec::with_capacity(8 + issuer.len() + subject.len());
        id.extend_from_slice(&(issuer.len() as u64).to_le_bytes());
        id.extend_from_slice(issuer);
        id.extend_from_slice(subject);
        id
    }
}

/// A principal's tag ([`Principal::tag`]): a SHA-256 digest of its issuer and subject that
/// names the person in store keys, sealed values and logs without saying who they are.
/// Compare two with [`crate::seal::constant_time_eq`] where one came from outside.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PrincipalTag(String);

impl std::ops::Deref for PrincipalTag {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

/// The tag as text, for what keys by text (a quota's owners, a session record's owner).
impl From<PrincipalTag> for String {
    fn from(tag: PrincipalTag) -> Self {
        tag.0
    }
}

impl std::fmt::Display for PrincipalTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Resolves principals for MCP requests and browsers.
#[derive(Clone)]
pub(crate) enum Identity {
    /// One local user (loopback only).
    Dev,
    /// An OpenID Connect issuer vouches for callers and browsers.
    Oidc(Arc<Oidc>),
}

impl Identity {
    /// Builds the configured identity; `oidc` discovers its issuer first.
    pub(crate) async fn start(
        config: &Config,
        http: reqwest::Client,
    ) -> Result<Self, DiscoveryError> {
        match (&config.identity, &config.oidc) {
            (IdentityMode::Dev, _) => Ok(Identity::Dev),
            (IdentityMode::Oidc, Some(settings)) => Ok(Identity::Oidc(Arc::new(
                Oidc::start(config, settings.clone(), http).await?,
            ))),
            // Config::resolve fills these together; never fall back to one shared user.
            (IdentityMode::Oidc, None) => Err(DiscoveryError::Unusable(
                "oidc identity without its settings".into(),
            )),
        }
    }

    /// Who is behind an MCP request. `dev` identity's one user is a person.
    pub(crate) async fn mcp_caller(
        &self,
        headers: &http::HeaderMap,
    ) -> Result<McpCaller, BearerError> {
        match self {
            Identity::Dev => Ok(McpCaller {
                principal: dev_principal(),
                presence: Presence::Person,
                scopes: None,
                client: None,
            }),
            Identity::Oidc(oidc) => oidc.authenticate(headers).await,
        }
    }

    /// The person at the browser, if signed in for at least `needed_for_secs` more.
    pub(crate) fn browser_principal(
        &self,
        sealer: &Sealer,
        headers: &http::HeaderMap,
        https: bool,
        needed_for_secs: i64,
    ) -> Option<Principal> {
        let now = grantry_base::clock::unix_now();
        match self {
            Identity::Dev => Some(dev_principal()),
            Identity::Oidc(_) => session::read(sealer, headers, now, https)
                .filter(|s| s.expires_at >= now + needed_for_secs)
                .map(|s| s.principal),
        }
    }
}

fn dev_principal() -> Principal {
    Principal {
        issuer: DEV_ISSUER.to_owned(),
        subject: DEV_SUBJECT.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::Principal;

    fn principal(issuer: &str, subject: &str) -> Principal {
        Principal {
            issuer: issuer.to_owned(),
            subject: subject.to_owned(),
        }
    }

    #[test]
    fn limiter_ids_tell_every_issuer_and_subject_apart() {
        let split_early = principal("https://a", "b:c");
        let split_late = principal("https://a:b", "c");
        assert_ne!(split_early.limiter_id(), split_late.limiter_id());
        assert_eq!(
            split_early.limiter_id(),
            principal("https://a", "b:c").limiter_id()
        );
    }
}
