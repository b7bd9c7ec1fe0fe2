//! The OAuth 2.0 client side of a sign-in (authorization code + PKCE), on the `oauth2` crate
//! driven by grantry's own reqwest client.
//!
//! A code is sent to the token endpoint exactly once: nothing here retries a token request,
//! because a second redemption can make the provider revoke what the first one issued.

use crate::telemetry::outbound::{self, Peer};
use std::future::Future;
use std::pin::Pin;

use oauth2::basic::{BasicClient, BasicErrorResponseType};
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
};

use grantry_base::clock::unix_now;

mod token;

pub use token::ProviderToken;

use super::catalog::{OAuthClient, PkceMode, TokenAuth};
use super::http::{OutboundError, read_capped, transport_reason};

/// Longest lifetime believed from `expires_in` (a year); a larger number is clamped.
const MAX_TOKEN_LIFETIME_SECS: i64 = 365 * 24 * 3600;

/// What the connect page hands the browser to: the provider's authorize URL and the secrets
/// grantry keeps to finish the flow.
pub(crate) struct AuthorizeStart {
    pub(crate) url: String,
    /// The PKCE verifier, when the provider takes PKCE.
    pub(crate) pkce_verifier: Option<String>,
}

/// Tokens as received, with the access token's expiry computed from local receipt time.
/// Its `Debug` shows no token ([`ProviderToken`]).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TokenSet {
    pub access_token: ProviderToken,
    pub refresh_token: Option<ProviderToken>,
    /// Unix seconds.
    pub expires_at: i64,
    pub scopes: Vec<String>,
    /// The account (tenant, company, business) the grant is used with, picked after connect.
    #[serde(default)]
    pub account: Option<super::Account>,
    /// The refresh token the current one replaced, kept through the provider's grace window.
    #[serde(default)]
    pub previous_refresh_token: Option<ProviderToken>,
    /// When that rotation happened (unix seconds).
    #[serde(default)]
    pub rotated_at: Option<i64>,
}

/// Whether a token endpoint's error code means the grant can never be refreshed again:
/// `invalid_grant` (RFC 6749), and Zoho's `invalid_code` for a dead refresh token.
pub(crate) fn grant_is_dead(error: &str) -> bool {
    matches!(error, "invalid_grant" | "invalid_code")
}

/// Why a token request failed, classified for what the caller should do next.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenError {
    /// The provider said no (`invalid_grant`, `invalid_client`, …): retrying will not help.
    #[error("the provider rejected the request: {0}")]
    Rejected(String),
    /// Unreachable, timed out or a 5xx / 429: the outcome is unknown or temporary.
    #[error("{0}")]
    Unavailable(OutboundError),
    /// The answer was not a usable token response.
    #[error("the provider's token response is unusable: {0}")]
    BadResponse(String),
}

/// Which endpoint a client is built for: Stripe authenticates token requests with its secret
/// key as the Basic user name, while the authorize URL carries the public client id.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Authorize,
    Token,
}

fn oauth_client(
    oauth: &OAuthClient,
    redirect_uri: &str,
    endpoint: Endpoint,
) -> Result<
    BasicClient<
        oauth2::EndpointSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointNotSet,
        oauth2::EndpointSet,
    >,
    TokenError,
> {
    let redirect = RedirectUrl::new(redirect_uri.to_owned())
        .map_err(|e| TokenError::BadResponse(format!("redirect URI: {e}")))?;
    let secret_key = oauth.token_auth == TokenAuth::SecretKey && endpoint == Endpoint::Token;
    let (client_id, client_secret) = if secret_key {
        (
            oauth.client_secret.clone().unwrap_or_default(),
            Some(String::new()),
        )
    } else {
        (oauth.client_id.clone(), oauth.client_secret.clone())
    };
    let mut client = BasicClient::new(ClientId::new(client_id))
        .set_auth_uri(AuthUrl::from_url(oauth.authorize_url.clone()))
        .set_token_uri(TokenUrl::from_url(oauth.token_url.clone()))
        .set_redirect_uri(redirect)
        .set_auth_type(match oauth.token_auth {
            TokenAuth::Basic | TokenAuth::SecretKey => AuthType::BasicAuth,
            TokenAuth::Post => AuthType::RequestBody,
        });
    if let Some(secret) = client_secret {
        client = client.set_client_secret(ClientSecret::new(secret));
    }
    Ok(client)
}

/// Builds the provider's authorize URL for one flow asking for `scopes`: `state` as given,
/// PKCE S256 unless the provider takes none.
pub(crate) fn authorize(
    oauth: &OAuthClient,
    scopes: &[String],
    redirect_uri: &str,
    state: &str,
) -> Result<AuthorizeStart, TokenError> {
    let client = oauth_client(oauth, redirect_uri, Endpoint::Authorize)?;
    let state = state.to_owned();
    let mut request = client.authorize_url(move || CsrfToken::new(state));
    // Most providers take space-separated scopes; Zoho wants them comma-separated.
    request = if oauth.scope_separator == " " {
        request.add_scopes(scopes.iter().cloned().map(Scope::new))
    } else if scopes.is_empty() {
        request
    } else {
        request.add_scope(Scope::new(scopes.join(&oauth.scope_separator)))
    };
    for (name, value) in &oauth.extra_authorize_params {
        request = request.add_extra_param(name, value);
    }
    let mut pkce_verifier = None;
    if oauth.pkce != PkceMode::Off {
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        request = request.set_pkce_challenge(challenge);
        pkce_verifier = Some(verifier.secret().clone());
    }
    let (url, _) = request.url();
    Ok(AuthorizeStart {
        url: url.into(),
        pkce_verifier,
    })
}

/// Redeems an authorization code, once; `requested`: the scopes its authorize URL asked for.
pub(crate) async fn exchange_code(
    http: &reqwest::Client,
    oauth: &OAuthClient,
    redirect_uri: &str,
    code: &str,
    pkce_verifier: Option<&str>,
    requested: &[String],
) -> Result<TokenSet, TokenError> {
    let client = oauth_client(oauth, redirect_uri, Endpoint::Token)?;
    let mut request = client.exchange_code(AuthorizationCode::new(code.to_owned()));
    if let Some(verifier) = pkce_verifier {
        request = request.set_pkce_verifier(PkceCodeVerifier::new(verifier.to_owned()));
    }
    let sender = Sender(http.clone());
    let response = request.request_async(&sender).await;
    let mut tokens = token_set(oauth, response, None)?;
    if tokens.scopes.is_empty() {
        // RFC 6749 §5.1: no `scope` in the answer means the requested ones were granted.
        tokens.scopes = requested.to_vec();
    }
    Ok(tokens)
}

/// Trades a refresh token for a new access token (and maybe a rotated refresh token).
pub(crate) async fn refresh(
    http: &reqwest::Client,
    oauth: &OAuthClient,
    redirect_uri: &str,
    refresh_token: &ProviderToken,
) -> Result<TokenSet, TokenError> {
    let client = oauth_client(oauth, redirect_uri, Endpoint::Token)?;
    let token = RefreshToken::new(refresh_token.expose().to_owned());
    let sender = Sender(http.clone());
    let response = client
        .exchange_refresh_token(&token)
        .request_async(&sender)
        .await;
    token_set(oauth, response, Some(refresh_token))
}

type BasicResponse = oauth2::basic::BasicTokenResponse;
type BasicRequestError =
    RequestTokenError<OutboundError, oauth2::StandardErrorResponse<BasicErrorResponseType>>;

fn token_set(
    oauth: &OAuthClient,
    response: Result<BasicResponse, BasicRequestError>,
    previous_refresh: Option<&ProviderToken>,
) -> Result<TokenSet, TokenError> {
    let response = response.map_err(|e| match e {
        RequestTokenError::ServerResponse(err) => TokenError::Rejected(err.error().to_string()),
        RequestTokenError::Request(outbound) => TokenError::Unavailable(outbound),
        RequestTokenError::Parse(err, _) => TokenError::BadResponse(err.to_string()),
        RequestTokenError::Other(text) => TokenError::BadResponse(text),
    })?;
    if !response
        .token_type()
        .as_ref()
        .eq_ignore_ascii_case("bearer")
    {
        return Err(TokenError::BadResponse(format!(
            "token_type `{}` is not Bearer",
            response.token_type().as_ref()
        )));
    }
    let lifetime = response
        .expires_in()
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(MAX_TOKEN_LIFETIME_SECS))
        .unwrap_or(oauth.default_token_lifetime_secs)
        .min(MAX_TOKEN_LIFETIME_SECS);
    Ok(TokenSet {
        access_token: response.access_token().secret().as_str().into(),
        refresh_token: response
            .refresh_token()
            .map(|t| t.secret().as_str().into())
            .or_else(|| previous_refresh.cloned()),
        expires_at: unix_now() + lifetime,
        scopes: response
            .scopes()
            .map(|s| s.iter().map(|scope| scope.to_string()).collect())
            .unwrap_or_default(),
        account: None,
        previous_refresh_token: None,
        rotated_at: None,
    })
}

/// Sends the `oauth2` crate's requests with grantry's reqwest client: no redirects, bounded
/// time and size, and 429 / 5xx surfaced as transient errors rather than parsed.
struct Sender(reqwest::Client);

impl<'c> oauth2::AsyncHttpClient<'c> for Sender {
    type Error = OutboundError;
    type Future =
        Pin<Box<dyn Future<Output = Result<oauth2::HttpResponse, OutboundError>> + Send + 'c>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let url = parts.uri.to_string();
            let request = self
                .0
                .request(parts.method, url)
                .headers(parts.headers)
                .body(body);
            let peer = Peer {
                role: "provider-token",
                name: None,
            };
            let response = outbound::send(request, peer)
                .await
                .map_err(|e| OutboundError::Transport(transport_reason(&e)))?;
            let mut status = response.status();
            if status.as_u16() == 429 || status.is_server_error() {
                return Err(OutboundError::Status(status.as_u16()));
            }
            let headers = response.headers().clone();
            let body = read_capped(response).await?;
            // Zoho answers some refusals with 200 and `{"error": …}`: read them as the
            // refusals they are, not as unparseable token responses.
            if status.is_success()
                && serde_json::from_slice::<serde_json::Value>(&body)
                    .is_ok_and(|v| v.get("error").is_some_and(serde_json::Value::is_string))
            {
                status = http::StatusCode::BAD_REQUEST;
            }
            let mut out = http::Response::builder().status(status);
            if let Some(h) = out.headers_mut() {
                *h = headers;
            }
            out.body(body)
                .map_err(|e| OutboundError::Transport(e.to_string()))
        })
    }
}

#[cfg(test)]
mod tests;
