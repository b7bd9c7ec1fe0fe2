//! One sign-in at the authorization server: discovery, the client, the authorization link
//! opened in the browser, the response on the loopback listener (its issuer checked), the
//! code exchanged for tokens; and a refresh.

use serde::Deserialize;
use url::Url;

use super::cache::Tokens;
use super::client::{self, Choice, Client};
use super::discovery::{self, Endpoints};
use super::{AUTH_ANSWER_BYTES, AUTHORIZE_TIMEOUT, AuthError, loopback};
use crate::body::{self, BodyError};
use crate::links;

/// What every sign-in toward one server needs.
pub(super) struct SignIn {
    pub(super) http: reqwest::Client,
    pub(super) server: Url,
    pub(super) choice: Choice,
    pub(super) open_with: Option<String>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    refresh_token: Option<String>,
    expires_in: Option<i64>,
}

impl SignIn {
    /// The whole authorization, for the scopes the challenge (else the metadata) names and
    /// those of `held`, the tokens' scope before (a step-up keeps what was granted).
    pub(super) async fn authorize(
        &self,
        challenge: Option<&str>,
        held: Option<&str>,
    ) -> Result<Tokens, AuthError> {
        let mut endpoints = discovery::discover(&self.http, &self.server, challenge).await?;
        endpoints.scope = union(held.unwrap_or_default(), &endpoints.scope);
        let loopback = loopback::Loopback::start().await?;
        let redirect_uri = loopback.redirect_uri.clone();
        let client = client::client(&self.http, &self.choice, &endpoints, &redirect_uri).await?;
        let (challenge, verifier) = oauth2::PkceCodeChallenge::new_random_sha256();
        let state = grantry_base::random_id();
        let link = authorization_link(&endpoints, &client, &redirect_uri, &state, &challenge);
        let link = links::check(link.as_str(), grantry_base::net::is_loopback(&self.server))
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
            ("code_verifier", verifier.secret().as_str()),
            ("resource", endpoints.resource.as_str()),
        ];
        let answer = self
            .token_request(&client, &endpoints.token_endpoint, &form)
            .await?;
        tracing::info!("signed in at the authorization server");
        let scope = Some(endpoints.scope.clone()).filter(|s| !s.is_empty());
        let mut tokens = tokens_of(answer, client, &endpoints, None);
        tokens.scope = scope;
        Ok(tokens)
    }

    pub(super) async fn refresh(&self, current: &Tokens) -> Result<Tokens, AuthError> {
        let refresh_token = current.refresh_token.as_deref().unwrap_or_default();
        let form = [
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
            ("resource", current.resource.as_str()),
        ];
        let answer = self
            .token_request(&current.client, &current.token_endpoint, &form)
            .await?;
        let refresh_token = answer.refresh_token.or(current.refresh_token.clone());
        Ok(Tokens {
            access_token: answer.access_token,
            // A server that does not rotate refresh tokens answers without one.
            refresh_token,
            expires_at: expires_at(answer.expires_in),
            ..current.clone()
        })
    }

    async fn token_request(
        &self,
        client: &Client,
        endpoint: &Url,
        form: &[(&str, &str)],
    ) -> Result<TokenAnswer, AuthError> {
        let response = client
            .token_request(&self.http, endpoint, form)
            .send()
            .await
            .map_err(|e| AuthError::Token(grantry_base::net::transport_reason(&e)))?;
        let status = response.status();
        let what = "the token endpoint's answer";
        let body = match body::json(response, what, AUTH_ANSWER_BYTES).await {
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

/// The scopes of `a` and those of `b` not in `a`, space-separated.
fn union(a: &str, b: &str) -> String {
    let mut scopes: Vec<&str> = a.split_whitespace().collect();
    for scope in b.split_whitespace() {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    scopes.join(" ")
}

fn authorization_link(
    endpoints: &Endpoints,
    client: &Client,
    redirect_uri: &str,
    state: &str,
    challenge: &oauth2::PkceCodeChallenge,
) -> Url {
    let mut link = endpoints.authorization_endpoint.clone();
    {
        let mut query = link.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &client.client_id)
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

fn expires_at(expires_in: Option<i64>) -> Option<i64> {
    expires_in.map(|secs| grantry_base::clock::unix_now() + secs)
}

fn tokens_of(
    answer: TokenAnswer,
    client: Client,
    endpoints: &Endpoints,
    previous_refresh: Option<String>,
) -> Tokens {
    Tokens {
        client,
        token_endpoint: endpoints.token_endpoint.clone(),
        resource: endpoints.resource.clone(),
        access_token: answer.access_token,
        refresh_token: answer.refresh_token.or(previous_refresh),
        expires_at: expires_at(answer.expires_in),
        scope: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake::{self, Fake, Setup};
    use super::*;

    #[tokio::test]
    async fn the_token_answer_is_read_within_the_bound() {
        let fake = Fake::start(Setup {
            padded: Some("/token"),
            ..Setup::default()
        })
        .await;
        let sign_in = SignIn {
            http: fake::http(),
            server: fake.server(),
            choice: Choice::default(),
            open_with: None,
        };
        let endpoint = Url::parse(&format!("{}/token", fake.base)).unwrap();
        let client = Client::public("c".into());
        let refused = sign_in
            .token_request(&client, &endpoint, &[("grant_type", "refresh_token")])
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

    #[test]
    fn a_step_up_asks_for_what_was_held_and_what_is_asked() {
        assert_eq!(
            union("mcp:basic", "mcp:write mcp:basic"),
            "mcp:basic mcp:write"
        );
        assert_eq!(union("", "a"), "a");
        assert_eq!(union("a", ""), "a");
    }
}
