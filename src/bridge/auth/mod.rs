//! MCP authorization toward a server that asks for it: on a 401 naming its Protected
//! Resource Metadata, the bridge reads that and the authorization server's metadata, runs
//! authorization code + PKCE (S256) in the browser with a loopback redirect (RFC 8252),
//! as `--client-id` or a dynamically registered public client, asks for the server as the
//! `resource` (RFC 8707), keeps the tokens in the token cache, refreshes them, and authorizes
//! again when a refresh fails. Tokens never reach a log or the client.

mod cache;
mod discovery;
#[cfg(test)]
mod fake;
mod loopback;

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use url::Url;

use super::body::{self, BodyError};
use super::links::{self, LinkRefusal};
use cache::{TokenCache, Tokens};
use discovery::Endpoints;

pub(super) use cache::default_dir;
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
    #[error("the authorization server offers no dynamic client registration; pass --client-id")]
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
    http: reqwest::Client,
    server: Url,
    cache: TokenCache,
    client_id: Option<String>,
    open_with: Option<String>,
    /// The current tokens: read without waiting, so requests with a good token never wait
    /// for a sign-in in progress.
    tokens: std::sync::Mutex<Option<Tokens>>,
    /// One refresh or sign-in at a time.
    renewing: tokio::sync::Mutex<()>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    refresh_token: Option<String>,
    expires_in: Option<i64>,
}

impl Authorizer {
    pub(super) fn new(
        http: reqwest::Client,
        server: Url,
        cache_dir: &Path,
        client_id: Option<String>,
        open_with: Option<String>,
    ) -> Self {
        let cache = TokenCache::new(cache_dir, &server);
        let tokens = std::sync::Mutex::new(cache.load());
        Self {
            http,
            server,
            cache,
            client_id,
            open_with,
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
        match self.refresh(&latest).await {
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
            match self.refresh(&current).await {
                Ok(renewed) => {
                    self.keep(renewed);
                    return Ok(());
                }
                Err(e) => tracing::info!("the refresh was refused ({e}); authorizing again"),
            }
        }
        let fresh = self.authorize(challenge).await?;
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

    /// The whole authorization: discovery, a client, the browser, the code, the tokens.
    async fn authorize(&self, challenge: Option<&str>) -> Result<Tokens, AuthError> {
        let endpoints = discovery::discover(&self.http, &self.server, challenge).await?;
        let loopback = loopback::Loopback::start().await?;
        let client_id = match &self.client_id {
            Some(id) => id.clone(),
            None => discovery::register(&self.http, &endpoints, &loopback.redirect_uri).await?,
        };
        let (challenge, verifier) = oauth2::PkceCodeChallenge::new_random_sha256();
        let state = crate::seal::random_id();
        let redirect_uri = loopback.redirect_uri.clone();
        let link = authorization_link(&endpoints, &client_id, &redirect_uri, &state, &challenge);
        let link = links::check(link.as_str(), crate::config::is_loopback(&self.server))
            .map_err(AuthError::Link)?;
        eprintln!(
            "grantry bridge: {} asks you to sign in. Opening {link}",
            self.server
        );
        if let Err(e) = links::open(&link, self.open_with.as_deref()) {
            tracing::warn!("{e}; open the link yourself");
        }
        let response = tokio::time::timeout(AUTHORIZE_TIMEOUT, loopback.response(&state))
            .await
            .map_err(|_| AuthError::TimedOut)?
            .ok_or(AuthError::TimedOut)?;
        let code = check_response(&response, &endpoints)?;
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri.as_str()),
            ("client_id", client_id.as_str()),
            ("code_verifier", verifier.secret().as_str()),
            ("resource", endpoints.resource.as_str()),
        ];
        let answer = self.token_request(&endpoints.token_endpoint, &form).await?;
        tracing::info!("signed in at the authorization server");
        Ok(tokens_of(
            answer,
            client_id,
            &endpoints.token_endpoint,
            &endpoints.resource,
            None,
        ))
    }

    async fn refresh(&self, current: &Tokens) -> Result<Tokens, AuthError> {
        let refresh_token = current.refresh_token.as_deref().unwrap_or_default();
        let form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("client_id", current.client_id.as_str()),
            ("resource", current.resource.as_str()),
        ];
        let answer = self.token_request(&current.token_endpoint, &form).await?;
        Ok(tokens_of(
            answer,
            current.client_id.clone(),
            &current.token_endpoint,
            &current.resource,
            current.refresh_token.clone(),
        ))
    }

    async fn token_request(
        &self,
        endpoint: &Url,
        form: &[(&str, &str)],
    ) -> Result<TokenAnswer, AuthError> {
        let response = self
            .http
            .post(endpoint.clone())
            .timeout(discovery::TIMEOUT)
            .form(form)
            .send()
            .await
            .map_err(|e| AuthError::Token(crate::providers::http::transport_reason(&e)))?;
        let status = response.status();
        let body =
            match body::json(response, "the token endpoint's answer", AUTH_ANSWER_BYTES).await {
                Err(BodyError::NotJson { .. }) => {
                    return Err(AuthError::Token(format!("HTTP {status} without JSON")));
                }
                read => read?,
            };
        if !status.is_success() {
            // The error code only: an error description may echo what was sent.
            let error = body["error"].as_str().unwrap_or("an unnamed error");
            return Err(AuthError::Token(format!("HTTP {status}, {error}")));
        }
        serde_json::from_value(body)
            .map_err(|_| AuthError::Token("no access_token in the answer".into()))
    }
}

fn authorization_link(
    endpoints: &Endpoints,
    client_id: &str,
    redirect_uri: &str,
    state: &str,
    challenge: &oauth2::PkceCodeChallenge,
) -> Url {
    let mut link = endpoints.authorization_endpoint.clone();
    {
        let mut query = link.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", client_id)
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("state", state)
            .append_pair("code_challenge", challenge.as_str())
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", &endpoints.resource);
        if !endpoints.scope.is_empty() {
            query.append_pair("scope", &endpoints.scope);
        }
    }
    link
}

/// The code of an authorization response (its `state` was checked by the listener), from
/// this issuer (RFC 9207: `iss` required where the server says it sends it).
fn check_response<'a>(
    response: &'a loopback::Response,
    endpoints: &Endpoints,
) -> Result<&'a str, AuthError> {
    // RFC 9207 §2.4: a simple string comparison; `https://id.example/` is another issuer.
    match response.get("iss") {
        Some(iss) if *iss != endpoints.issuer => {
            return Err(AuthError::Refused(
                "a response from another issuer (iss)".into(),
            ));
        }
        None if endpoints.sends_iss => {
            return Err(AuthError::Refused(
                "a response without its issuer (iss)".into(),
            ));
        }
        _ => {}
    }
    if let Some(error) = response.get("error") {
        return Err(AuthError::Refused(error.clone()));
    }
    response
        .get("code")
        .map(String::as_str)
        .ok_or_else(|| AuthError::Refused("no code".into()))
}

fn tokens_of(
    answer: TokenAnswer,
    client_id: String,
    token_endpoint: &Url,
    resource: &str,
    previous_refresh: Option<String>,
) -> Tokens {
    Tokens {
        client_id,
        token_endpoint: token_endpoint.clone(),
        resource: resource.to_owned(),
        access_token: answer.access_token,
        // A server that does not rotate refresh tokens answers without one.
        refresh_token: answer.refresh_token.or(previous_refresh),
        expires_at: answer
            .expires_in
            .map(|secs| crate::clock::unix_now() + secs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fake::{Fake, Setup};

    #[tokio::test]
    async fn the_token_answer_is_read_within_the_bound() {
        let fake = Fake::start(Setup {
            padded: Some("/token"),
            ..Setup::default()
        })
        .await;
        let dir = tempfile::tempdir().unwrap();
        let authorizer = Authorizer::new(fake::http(), fake.server(), dir.path(), None, None);
        let endpoint = Url::parse(&format!("{}/token", fake.base)).unwrap();
        let refused = authorizer
            .token_request(&endpoint, &[("grant_type", "refresh_token")])
            .await
            .err()
            .expect("a padded answer is refused");
        assert_eq!(
            refused.to_string(),
            "the token endpoint's answer is larger than 256 KiB; not read"
        );
        let sent = fake.token_requests();
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].form["grant_type"], "refresh_token");
        assert!(sent[0].authorization.is_none(), "a public client");
    }

    #[tokio::test]
    async fn an_authorization_response_is_taken_only_from_the_issuer_exactly() {
        let fake = Fake::start(Setup::default()).await;
        let endpoints = discovery::discover(&fake::http(), &fake.server(), None)
            .await
            .unwrap();
        let response = |iss: Option<String>| {
            let mut response = loopback::Response::new();
            response.insert("code".into(), "c".into());
            if let Some(iss) = iss {
                response.insert("iss".into(), iss);
            }
            response
        };
        let exact = response(Some(fake.base.clone()));
        assert_eq!(check_response(&exact, &endpoints).unwrap(), "c");
        for refused in [
            Some(format!("{}/", fake.base)),
            Some("https://evil.example".into()),
            None,
        ] {
            let refused = response(refused);
            assert!(check_response(&refused, &endpoints).is_err(), "{refused:?}");
        }
    }
}
