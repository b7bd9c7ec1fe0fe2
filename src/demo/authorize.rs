//! The authorization endpoint: `GET /authorize` shows the consent page, `POST /authorize`
//! records the decision and sends the browser back with a code or an error.
//!
//! Two kinds of refusal, as RFC 6749 §4.1.2.1 requires: when the client or redirect URI cannot
//! be trusted, a 400 page and **never** a redirect (no open redirector); otherwise the error
//! goes back to the redirect URI with `state` as given and RFC 9207 `iss`. PKCE S256 is
//! mandatory. The POST re-validates everything, because hidden fields are user input.
//!
//! The POST carries no CSRF token on purpose: the demo has no session to ride on. A forged
//! approval only sends a code to a registered redirect URI, where grantry's callback refuses it
//! for want of its `state` and binding cookie, and PKCE ties the code to the verifier held by
//! whoever started the flow.

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use url::Url;

use super::codes::{CODE_TTL_SECS, CodeClaims};
use super::pages::{self, ConsentPage, ErrorPage, ScopeView};
use super::params::{Params, Repeated, is_form};
use super::{DEMO_DEFAULT_USER, DEMO_SCOPE, DemoConfig, Inner, Shared, bump, codes, now, scope};
use crate::seal::{self, Purpose};

/// An authorization request that passed every check.
struct AuthRequest<'a> {
    client_id: &'a str,
    redirect_uri: Url,
    redirect_uri_raw: &'a str,
    scope: String,
    state: Option<&'a str>,
    code_challenge: &'a str,
}

/// Why an authorization request is refused, and how the refusal reaches the user.
enum Refusal {
    /// The client or redirect URI is not trusted: say so on a page, send nobody anywhere.
    Page(&'static str),
    /// Reported to the client at its (registered) redirect URI.
    Redirect { to: Url, error: &'static str },
}

impl Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::Page(message) => {
                tracing::info!(reason = message, "demo: authorization request refused");
                let page = ErrorPage {
                    title: "This sign-in request is not valid",
                    message,
                };
                pages::html(StatusCode::BAD_REQUEST, &page, None)
            }
            Refusal::Redirect { to, error } => {
                tracing::info!(error, "demo: authorization error sent to the client");
                pages::redirect(&to)
            }
        }
    }
}

/// `GET /authorize`: the consent page (or, with `auto_approve`, the code at once).
pub(super) async fn show(State(inner): State<Shared>, RawQuery(query): RawQuery) -> Response {
    bump(&inner.counters.authorize_requests);
    let params = Params::parse(query.unwrap_or_default().as_bytes());
    let request = match validate(&inner, &params) {
        Ok(request) => request,
        Err(refusal) => return refusal.into_response(),
    };
    if inner.config.auto_approve {
        return issue_code(&inner, &request, DEMO_DEFAULT_USER);
    }
    consent_page(&request, DEMO_DEFAULT_USER, None, StatusCode::OK)
}

/// `POST /authorize`: Approve or Deny from the consent page.
pub(super) async fn decide(
    State(inner): State<Shared>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !is_form(&headers) {
        let page = ErrorPage {
            title: "This sign-in request is not valid",
            message: "The consent form must be sent as application/x-www-form-urlencoded.",
        };
        return pages::html(StatusCode::UNSUPPORTED_MEDIA_TYPE, &page, None);
    }
    let params = Params::parse(&body);
    let request = match validate(&inner, &params) {
        Ok(request) => request,
        Err(refusal) => return refusal.into_response(),
    };
    let typed_user = params.get("user").ok().flatten().unwrap_or_default();
    match params.get("decision") {
        Ok(Some("deny")) => {
            let to = error_url(
                &inner,
                &request.redirect_uri,
                "access_denied",
                "the user denied the request",
                request.state,
            );
            Refusal::Redirect {
                to,
                error: "access_denied",
            }
            .into_response()
        }
        Ok(Some(decision @ ("approve" | "approve_read"))) => match params.get("user") {
            Ok(Some(user)) if is_valid_user(user) => approve(&inner, request, user, decision),
            _ => consent_page(
                &request,
                typed_user,
                Some("The user name must be 1 to 64 letters, digits or . _ @ -"),
                StatusCode::BAD_REQUEST,
            ),
        },
        _ => consent_page(
            &request,
            typed_user,
            Some("Choose Approve or Deny."),
            StatusCode::BAD_REQUEST,
        ),
    }
}

/// Approve as `user`: everything asked, or (`approve_read`, "Allow reading only") all but
/// write access: granular consent, fewer scopes than asked.
fn approve(inner: &Inner, request: AuthRequest<'_>, user: &str, decision: &str) -> Response {
    let granted = match decision {
        "approve_read" => scope::read_only(&request.scope),
        _ => Some(request.scope.clone()),
    };
    let Some(granted) = granted else {
        return consent_page(
            &request,
            user,
            Some("This request asks for no reading access to allow alone."),
            StatusCode::BAD_REQUEST,
        );
    };
    let request = AuthRequest {
        scope: granted,
        ..request
    };
    issue_code(inner, &request, user)
}

/// Checks an authorization request (query of the GET, form of the POST).
fn validate<'a>(inner: &Inner, params: &'a Params) -> Result<AuthRequest<'a>, Refusal> {
    let client_id = registered_client(&inner.config, params)?;
    let (redirect_uri, redirect_uri_raw) = registered_redirect(&inner.config, params)?;
    // From here on, errors go back to the client. A repeated state cannot be echoed: send none.
    let state = params.get("state").unwrap_or(None);
    let back = |(error, description): OAuthError| Refusal::Redirect {
        to: error_url(inner, &redirect_uri, error, description, state),
        error,
    };
    let (code_challenge, scope) = code_request(params).map_err(back)?;
    Ok(AuthRequest {
        client_id,
        redirect_uri,
        redirect_uri_raw,
        scope,
        state,
        code_challenge,
    })
}

/// An OAuth error code and its description, sent back to the client.
type OAuthError = (&'static str, &'static str);

fn registered_client<'a>(config: &DemoConfig, params: &'a Params) -> Result<&'a str, Refusal> {
    match params.get("client_id") {
        Err(_) => Err(Refusal::Page(
            "The client_id parameter was given more than once.",
        )),
        Ok(None) => Err(Refusal::Page(
            "The request does not name a client (client_id).",
        )),
        Ok(Some(id)) if id != config.client_id => Err(Refusal::Page(
            "The client_id is not registered with the demo provider.",
        )),
        Ok(Some(id)) => Ok(id),
    }
}

/// The redirect URI, parsed and as written, if the client registered it.
fn registered_redirect<'a>(
    config: &DemoConfig,
    params: &'a Params,
) -> Result<(Url, &'a str), Refusal> {
    let raw = match params.get("redirect_uri") {
        Err(_) => {
            return Err(Refusal::Page(
                "The redirect_uri parameter was given more than once.",
            ));
        }
        Ok(None) => return Err(Refusal::Page("The request has no redirect_uri.")),
        Ok(Some(uri)) if !config.redirect_uris.iter().any(|r| r == uri) => {
            return Err(Refusal::Page(
                "The redirect_uri is not registered for this client.",
            ));
        }
        Ok(Some(uri)) => uri,
    };
    let parsed = Url::parse(raw).map_err(|err| {
        tracing::error!(error = %err, "demo: a configured redirect URI is not a valid URL");
        Refusal::Page("The registered redirect_uri is not a valid URL; check the configuration.")
    })?;
    Ok((parsed, raw))
}

/// The code request's PKCE challenge and scope: `response_type=code`, S256, a known scope,
/// no parameter twice.
fn code_request(params: &Params) -> Result<(&str, String), OAuthError> {
    const REPEATED: OAuthError = ("invalid_request", "a parameter was given more than once");
    let get = |name: &'static str| params.get(name).map_err(|_: Repeated| REPEATED);
    get("state")?;
    match get("response_type")? {
        None => return Err(("invalid_request", "response_type is required")),
        Some("code") => {}
        Some(_) => {
            return Err((
                "unsupported_response_type",
                "only response_type=code is supported",
            ));
        }
    }
    let (Some("S256"), Some(code_challenge)) =
        (get("code_challenge_method")?, get("code_challenge")?)
    else {
        return Err(("invalid_request", "PKCE S256 is required"));
    };
    if !codes::is_pkce_value(code_challenge) {
        return Err(("invalid_request", "code_challenge is malformed"));
    }
    let scope = match get("scope")? {
        None => DEMO_SCOPE.to_owned(), // RFC 6749 §3.3: a documented default scope.
        Some(requested) => scope::normalize(requested).ok_or((
            "invalid_scope",
            "the demo offers only the scopes invoices:read and invoices:write",
        ))?,
    };
    Ok((code_challenge, scope))
}

/// A demo user name: 1 to 64 characters of `[A-Za-z0-9._@-]`.
fn is_valid_user(user: &str) -> bool {
    (1..=64).contains(&user.len())
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'@' | b'-'))
}

/// Seals a code for `user` and sends the browser back with it.
fn issue_code(inner: &Inner, request: &AuthRequest<'_>, user: &str) -> Response {
    let claims = CodeClaims {
        id: seal::random_id(),
        client_id: request.client_id.to_owned(),
        redirect_uri: request.redirect_uri_raw.to_owned(),
        code_challenge: request.code_challenge.to_owned(),
        user: user.to_owned(),
        scope: request.scope.clone(),
        exp: now() + CODE_TTL_SECS,
    };
    let code = inner.seal(Purpose::DemoCode, &claims, CODE_TTL_SECS);
    bump(&inner.counters.codes_issued);
    tracing::info!(
        client_id = request.client_id,
        user,
        "demo: authorization code issued"
    );
    let mut pairs = vec![("code", code.as_str())];
    pairs.extend(request.state.map(|s| ("state", s)));
    pairs.push(("iss", inner.config.issuer.as_str()));
    pages::redirect(&response_url(&request.redirect_uri, &pairs))
}

/// The redirect URI with an RFC 6749 §4.1.2.1 error response (plus `state` and `iss`).
fn error_url(
    inner: &Inner,
    redirect_uri: &Url,
    error: &'static str,
    description: &'static str,
    state: Option<&str>,
) -> Url {
    let mut pairs = vec![("error", error), ("error_description", description)];
    pairs.extend(state.map(|s| ("state", s)));
    pairs.push(("iss", inner.config.issuer.as_str()));
    response_url(redirect_uri, &pairs)
}

/// `redirect_uri` with `pairs` appended to its query (keeping any query it has, RFC 6749
/// §3.1.2) and no fragment.
fn response_url(redirect_uri: &Url, pairs: &[(&str, &str)]) -> Url {
    let mut url = redirect_uri.clone();
    url.set_fragment(None);
    url.query_pairs_mut().extend_pairs(pairs);
    url
}

fn consent_page(
    request: &AuthRequest<'_>,
    user: &str,
    error: Option<&str>,
    status: StatusCode,
) -> Response {
    let scopes = request
        .scope
        .split(' ')
        .map(|name| ScopeView {
            name: name.to_owned(),
            description: scope::description(name),
        })
        .collect();
    let page = ConsentPage {
        client_id: request.client_id,
        redirect_uri: request.redirect_uri_raw,
        read_only_choice: scope::read_only(&request.scope).is_some(),
        scopes,
        scope: &request.scope,
        state: request.state,
        code_challenge: request.code_challenge,
        user,
        error,
    };
    pages::html(status, &page, Some(&request.redirect_uri))
}
