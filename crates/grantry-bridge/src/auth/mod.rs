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
pub(super) mod document;
#[cfg(test)]
mod fake;
mod loopback;
mod sign_in;

use std::path::Path;
use std::time::{Duration, Instant};

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
/// After a sign-in fails, requests within this get that failure rather than a new sign-in
/// each (a new browser tab each, within a second).
const FAILURE_MEMORY: Duration = Duration::from_secs(30);

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
    #[error(
        "the server asks for the scope {0:?}, which the last sign-in asked for and did not get"
    )]
    NotGranted(String),
    #[error(
        "a sign-in failed {} s ago ({reason}); the bridge signs in again {} s after it",
        ago.as_secs(), FAILURE_MEMORY.as_secs()
    )]
    FailedLately { reason: String, ago: Duration },
}

pub(super) struct Authorizer {
    sign_in: SignIn,
    cache: TokenCache,
    /// The current tokens: read without waiting, so requests with a good token never wait
    /// for a sign-in in progress.
    tokens: std::sync::Mutex<Option<Tokens>>,
    /// One refresh or sign-in at a time.
    renewing: tokio::sync::Mutex<()>,
    /// The last sign-in's failure and when, until a sign-in succeeds.
    failed: std::sync::Mutex<Option<(Instant, String)>>,
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
        // Kept tokens serve only the client configured now, with its secret as it is now.
        let kept = cache.load().and_then(|tokens| {
            let client = tokens.client.clone().into_chosen(&choice)?;
            Some(Tokens { client, ..tokens })
        });
        let tokens = std::sync::Mutex::new(kept);
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
            failed: std::sync::Mutex::new(None),
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
        let now = grantry_base::clock::unix_now();
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
        if renewed_meanwhile(current.as_ref(), rejected) {
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
        let fresh = self.authorize(challenge, None).await?;
        self.keep(fresh);
        Ok(())
    }

    /// After a 403 `insufficient_scope` to `rejected`: a sign-in for the scopes held and those
    /// the challenge names, unless all were asked for already (it would not help).
    pub(super) async fn step_up(
        &self,
        challenge: &str,
        rejected: Option<&str>,
    ) -> Result<(), AuthError> {
        let _turn = self.renewing.lock().await;
        let current = self.current();
        if renewed_meanwhile(current.as_ref(), rejected) {
            return Ok(());
        }
        let held = current.and_then(|t| t.scope).unwrap_or_default();
        let asked = challenge_parameter(challenge, "scope").unwrap_or_default();
        if asked
            .split_whitespace()
            .all(|s| held.split_whitespace().any(|h| h == s))
        {
            return Err(AuthError::NotGranted(asked));
        }
        let fresh = self.authorize(Some(challenge), Some(&held)).await?;
        self.keep(fresh);
        Ok(())
    }

    /// A sign-in, unless one failed lately: then that failure again.
    async fn authorize(
        &self,
        challenge: Option<&str>,
        held: Option<&str>,
    ) -> Result<Tokens, AuthError> {
        if let Some((at, reason)) = self.failed().clone()
            && at.elapsed() < FAILURE_MEMORY
        {
            let ago = at.elapsed();
            return Err(AuthError::FailedLately { reason, ago });
        }
        let signed_in = self.sign_in.authorize(challenge, held).await;
        *self.failed() = match &signed_in {
            Ok(_) => None,
            Err(e) => Some((Instant::now(), e.to_string())),
        };
        signed_in
    }

    fn failed(&self) -> std::sync::MutexGuard<'_, Option<(Instant, String)>> {
        self.failed.lock().expect("failure lock is never poisoned")
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

/// Whether another request renewed the token while this one waited for its turn.
fn renewed_meanwhile(current: Option<&Tokens>, rejected: Option<&str>) -> bool {
    current.is_some_and(|current| Some(current.access_token.as_str()) != rejected)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use fake::{Fake, Setup};

    fn authorizer(fake: &Fake, dir: &Path) -> Arc<Authorizer> {
        let opener = fake::follower(dir);
        let cache = dir.join("tokens");
        let choice = Choice::default();
        let authorizer = Authorizer::new(fake::http(), fake.server(), &cache, choice, Some(opener));
        Arc::new(authorizer)
    }

    #[tokio::test]
    async fn after_a_failed_sign_in_the_next_requests_get_its_failure_not_a_new_tab() {
        let fake = Fake::start(Setup {
            deny: true,
            ..Setup::default()
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let authorizer = authorizer(&fake, dir.path());
        let requests = (0..3).map(|_| {
            let authorizer = Arc::clone(&authorizer);
            tokio::spawn(async move { authorizer.renew(None, None).await })
        });
        let outcomes = futures::future::join_all(requests).await;
        let failures: Vec<String> = outcomes
            .into_iter()
            .map(|outcome| outcome.unwrap().unwrap_err().to_string())
            .collect();
        assert_eq!(fake.authorizations().len(), 1, "{failures:?}");
        assert!(
            failures.iter().all(|f| f.contains("access_denied")),
            "{failures:?}"
        );
        let again = authorizer.renew(None, None).await.unwrap_err();
        assert!(matches!(again, AuthError::FailedLately { .. }), "{again}");
        assert_eq!(fake.authorizations().len(), 1);
    }

    #[tokio::test]
    async fn a_step_up_signs_in_once_for_the_scopes_held_and_asked() {
        let fake = Fake::start(Setup::default()).await;
        let dir = tempfile::tempdir().unwrap();
        let authorizer = authorizer(&fake, dir.path());
        authorizer
            .renew(Some(r#"Bearer scope="mcp:basic""#), None)
            .await
            .unwrap();
        let first = authorizer.access_token().await.unwrap();
        let more = r#"Bearer error="insufficient_scope", scope="mcp:write""#;
        authorizer.step_up(more, Some(&first)).await.unwrap();
        let second = authorizer.access_token().await.unwrap();
        assert_ne!(first, second);
        let scopes: Vec<String> = fake
            .authorizations()
            .into_iter()
            .map(|query| query["scope"].clone())
            .collect();
        assert_eq!(scopes, ["mcp:basic", "mcp:basic mcp:write"]);
        // Asked again for what it asked for: another sign-in would not help.
        let refused = authorizer.step_up(more, Some(&second)).await.unwrap_err();
        assert!(matches!(refused, AuthError::NotGranted(_)), "{refused}");
        assert_eq!(fake.authorizations().len(), 2);
    }
}
