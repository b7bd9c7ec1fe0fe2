//! MCP authorization toward a server that asks for it: on a 401 naming its Protected
//! Resource Metadata, the bridge reads that and the authorization server's metadata, runs
//! authorization code + PKCE (S256) in the browser with a loopback redirect (RFC 8252), as
//! `--client-id` (public, or confidential with its secret), a Client ID Metadata Document or
//! a dynamically registered client, asks for the server as the `resource` (RFC 8707), keeps
//! the tokens in the token cache, refreshes them, and authorizes again when a refresh fails.
//! Tokens and secrets never reach a log or the client.

mod cache;
mod client;
mod discovery;
#[cfg(test)]
mod fake;
mod loopback;
mod sign_in;

use std::path::Path;
use std::time::Duration;

use url::Url;

use super::body::BodyError;
use super::links::LinkRefusal;
use cache::{TokenCache, Tokens};
use sign_in::SignIn;

pub(super) use cache::default_dir;
pub(super) use client::Choice;
pub(super) use discovery::parameter as challenge_parameter;

/// How long the user has to finish signing in at the authorization server.
const AUTHORIZE_TIMEOUT: Duration = Duration::from_secs(300);
/// Largest metadata, registration or token answer read: a few KiB in practice.
const AUTH_ANSWER_BYTES: usize = 256 << 10;
/// A token this close to its expiry is refreshed before use.
const EXPIRY_MARGIN_SECS: i64 = 30;

/// Why the bridge could not get a token.
#[derive(Debug, thiserror::Error)]
pub(super) enum AuthError {
    #[error("reading {what}: {reason}")]
    Discovery { what: &'static str, reason: String },
    #[error(
        "the authorization server offers no dynamic client registration; pass --client-id \
         (or --client-metadata-url, where it accepts client metadata documents)"
    )]
    NoRegistration,
    #[error("registering a client at the authorization server: {0}")]
    Registration(String),
    #[error("the authorization link is not opened: {0}")]
    Link(LinkRefusal),
    #[error("the sign-in at the authorization server ended with {0}")]
    Refused(String),
    #[error("nobody signed in at the authorization server within {} s", AUTHORIZE_TIMEOUT.as_secs())]
    TimedOut,
    #[error("the token endpoint refused: {0}")]
    Token(String),
    #[error("the loopback redirect listener: {0}")]
    Listener(#[from] std::io::Error),
    #[error(transparent)]
    Body(#[from] BodyError),
}

pub(super) struct Authorizer {
    sign_in: SignIn,
    cache: TokenCache,
    /// The current tokens: read without waiting, so requests with a good token never wait
    /// for a sign-in in progress.
    tokens: std::sync::Mutex<Option<Tokens>>,
    /// One refresh or sign-in at a time.
    renewing: tokio::sync::Mutex<()>,
}

impl Authorizer {
    pub(super) fn new(
        http: reqwest::Client,
        server: Url,
        cache_dir: &Path,
        choice: Choice,
        open_with: Option<String>,
    ) -> Self {
        let cache = TokenCache::new(cache_dir, &server);
        let tokens = std::sync::Mutex::new(cache.load());
        let sign_in = SignIn {
            http,
            server,
            choice,
            open_with,
        };
        Self {
            sign_in,
            cache,
            tokens,
            renewing: tokio::sync::Mutex::new(()),
        }
    }

    fn current(&self) -> Option<Tokens> {
        self.tokens
            .lock()
            .expect("tokens lock is never poisoned")
            .clone()
    }

    /// The access token to send now, refreshed first if it is about to expire.
    pub(super) async fn access_token(&self) -> Option<String> {
        let current = self.current()?;
        let now = crate::clock::unix_now();
        let expiring = current
            .expires_at
            .is_some_and(|at| at - EXPIRY_MARGIN_SECS <= now);
        if !expiring || current.refresh_token.is_none() {
            return Some(current.access_token);
        }
        let _turn = self.renewing.lock().await;
        // Refreshed by another request while this one waited for its turn.
        let latest = self.current()?;
        if latest.access_token != current.access_token {
            return Some(latest.access_token);
        }
        match self.sign_in.refresh(&latest).await {
            Ok(renewed) => Some(self.keep(renewed)),
            Err(e) => {
                tracing::info!("could not refresh the token ({e}); using it as it is");
                Some(latest.access_token)
            }
        }
    }

    /// After a 401 to `rejected` (the token sent, if any): refresh, or authorize again.
    pub(super) async fn renew(
        &self,
        challenge: Option<&str>,
        rejected: Option<&str>,
    ) -> Result<(), AuthError> {
        let _turn = self.renewing.lock().await;
        let current = self.current();
        // Another request renewed it while this one waited for its turn.
        if let Some(current) = &current
            && Some(current.access_token.as_str()) != rejected
        {
            return Ok(());
        }
        if let Some(current) = current.filter(|t| t.refresh_token.is_some()) {
            match self.sign_in.refresh(&current).await {
                Ok(renewed) => {
                    self.keep(renewed);
                    return Ok(());
                }
                Err(e) => tracing::info!("the refresh was refused ({e}); authorizing again"),
            }
        }
        let fresh = self.sign_in.authorize(challenge, None).await?;
        self.keep(fresh);
        Ok(())
    }

    /// Keeps `tokens` in memory and in the cache; their access token.
    fn keep(&self, tokens: Tokens) -> String {
        if let Err(e) = self.cache.store(&tokens) {
            tracing::warn!(path = %self.cache.path().display(), error = %e, "could not keep the tokens");
        }
        let access = tokens.access_token.clone();
        *self.tokens.lock().expect("tokens lock is never poisoned") = Some(tokens);
        access
    }
}
