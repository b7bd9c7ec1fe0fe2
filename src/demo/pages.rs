//! The demo's HTML pages and browser redirects, with the headers every one of them carries.
//!
//! Pages are askama templates (auto-escaped, no JavaScript). Each HTML response is `no-store`
//! (it holds the request's parameters), forbids framing (clickjacking the Approve button), and
//! allows form posts only to the demo itself and the origin the browser is sent back to:
//! browsers apply `form-action` to the redirect that follows a form post.

use askama::Template;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, LOCATION, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use url::Url;

/// One scope as the consent page shows it.
pub(super) struct ScopeView {
    pub(crate) name: String,
    pub(crate) description: &'static str,
}

/// The consent page: who asks for what, as which demo user, Approve or Deny.
#[derive(Template, askama_web::WebTemplate)]
#[template(path = "demo_consent.html")]
pub(super) struct ConsentPage<'a> {
    pub(crate) client_id: &'a str,
    pub(crate) redirect_uri: &'a str,
    pub(crate) scopes: Vec<ScopeView>,
    /// Whether it asks for write access besides reading: then "Allow reading only" is offered.
    pub(crate) read_only_choice: bool,
    /// The request's parameters, carried back as hidden fields (and re-validated on POST).
    pub(crate) scope: &'a str,
    pub(crate) state: Option<&'a str>,
    pub(crate) code_challenge: &'a str,
    pub(crate) user: &'a str,
    /// Shown above the form when a POST was refused (e.g. a bad user name).
    pub(crate) error: Option<&'a str>,
}

/// A page for requests that cannot be answered with a redirect.
#[derive(Template, askama_web::WebTemplate)]
#[template(path = "demo_error.html")]
pub(super) struct ErrorPage<'a> {
    pub(crate) title: &'a str,
    pub(crate) message: &'a str,
}

/// Renders `page` with `status` and the security headers. `return_to` is the redirect URI the
/// page's form may lead to, whose origin is added to `form-action`.
pub(super) fn html<T: Template>(status: StatusCode, page: &T, return_to: Option<&Url>) -> Response {
    let body = match page.render() {
        Ok(body) => body,
        Err(err) => {
            tracing::error!(error = %err, "demo: rendering a page failed");
            return (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response();
        }
    };
    let mut headers = HeaderMap::new();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    let csp = content_security_policy(return_to);
    match HeaderValue::from_str(&csp) {
        Ok(value) => headers.insert(CONTENT_SECURITY_POLICY, value),
        // Cannot happen for a parsed URL's origin; fall back to the strictest policy.
        Err(_) => headers.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP_WITHOUT_ORIGIN),
        ),
    };
    (status, headers, Html(body)).into_response()
}

const CSP_WITHOUT_ORIGIN: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

fn content_security_policy(return_to: Option<&Url>) -> String {
    // Opaque origins (custom schemes) serialize as "null": nothing to add for them.
    let origin = return_to
        .map(|u| u.origin())
        .filter(|o| o.is_tuple())
        .map(|o| format!(" {}", o.ascii_serialization()))
        .unwrap_or_default();
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'{origin}; \
         frame-ancestors 'none'; base-uri 'none'"
    )
}

/// A 303 to `location` (a redirect URI with the response in its query). `no-store` because
/// the Location carries a code or an error for one request; `no-referrer` so nothing of this
/// request leaks onward.
pub(super) fn redirect(location: &Url) -> Response {
    let mut headers = HeaderMap::new();
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    match HeaderValue::from_str(location.as_str()) {
        Ok(value) => headers.insert(LOCATION, value),
        Err(_) => {
            // A serialized Url is ASCII without control characters, so this is unreachable.
            tracing::error!("demo: redirect location is not a valid header value");
            return (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response();
        }
    };
    (StatusCode::SEE_OTHER, headers).into_response()
}
