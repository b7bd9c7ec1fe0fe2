//! The browser pages of the sign-in routes, and the headers every one of them carries.
//!
//! Pages are askama templates (escaped, no JavaScript). Every response is `no-store`, cannot
//! be framed, sends no referrer (the callback URL carries a code) and loads nothing but
//! grantry's own stylesheet.

use askama::Template;
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, REFERRER_POLICY, STRICT_TRANSPORT_SECURITY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};

use crate::ui::Moment;

/// `/`: what this server is, the URL to give an assistant, and the way to the connections.
#[derive(Template)]
#[template(path = "home.html")]
pub(crate) struct HomePage<'a> {
    /// The MCP endpoint, as a client is configured with it.
    pub(crate) mcp_url: &'a str,
    /// The providers it connects, by their display names.
    pub(crate) providers: &'a [&'a str],
    pub(crate) connections: &'a str,
}

/// The connect page: who connects which provider with which scopes, and a Continue button.
#[derive(Template)]
#[template(path = "connect.html")]
pub(crate) struct ConnectPage<'a> {
    pub(crate) who: &'a str,
    pub(crate) provider_name: &'a str,
    pub(crate) scopes: &'a [String],
    pub(crate) action: &'a str,
    pub(crate) csrf: &'a str,
}

/// The connect page of a provider connected with an API key: the key form, on grantry's origin.
#[derive(Template)]
#[template(path = "connect_key.html")]
pub(crate) struct KeyPage<'a> {
    pub(crate) who: &'a str,
    pub(crate) provider_name: &'a str,
    /// Whether the form asks for the account's site name too.
    pub(crate) asks_site: bool,
    /// The site name typed last time (never the key).
    pub(crate) site: &'a str,
    pub(crate) help_url: Option<&'a str>,
    /// Why the last try stored nothing.
    pub(crate) problem: Option<&'a str>,
    pub(crate) action: &'a str,
    pub(crate) csrf: &'a str,
}

/// The connections page: the person's connections, and what a disconnect just did.
#[derive(Template)]
#[template(path = "connections.html")]
pub(crate) struct ConnectionsPage<'a> {
    pub(crate) who: &'a str,
    pub(crate) notice: Option<&'a str>,
    pub(crate) connections: &'a [ConnectionRow],
    /// Sign-in links for another connection: providers with accounts, and those not yet
    /// connected.
    pub(crate) connect: &'a [ConnectLink],
}

/// A link that starts a new connection to `provider`.
pub(crate) struct ConnectLink {
    pub(crate) provider_name: String,
    /// Whether the person has a connection there already (the link adds another account).
    pub(crate) another: bool,
    pub(crate) href: String,
}

/// One connection as the connections page shows it (times in the reader's words, and in
/// RFC 3339 for `<time datetime>`).
pub(crate) struct ConnectionRow {
    pub(crate) provider_name: String,
    pub(crate) account: Option<String>,
    /// The provider, with the account in brackets where there is one: tells two apart.
    pub(crate) name: String,
    pub(crate) scopes: Vec<String>,
    /// Whether it works as it is (else `health` says what is wrong).
    pub(crate) healthy: bool,
    /// Whether it cannot be used until the person reconnects it (marked beside its name).
    pub(crate) broken: bool,
    pub(crate) health: String,
    pub(crate) connected_since: Moment,
    pub(crate) last_used: Option<Moment>,
    /// The MCP client it was last used through, in the reader's words.
    pub(crate) used_by: Option<String>,
    pub(crate) expires_at: Option<Moment>,
    /// A fresh connect link for the same provider: the same connection, signed in again.
    pub(crate) reconnect: String,
    /// Where its Disconnect asks first.
    pub(crate) disconnect: String,
}

/// The step before a disconnect: what will happen, and the button that does it.
#[derive(Template)]
#[template(path = "confirm_disconnect.html")]
pub(crate) struct ConfirmDisconnectPage<'a> {
    pub(crate) provider_name: &'a str,
    /// The message key saying what a disconnect does (an API key is only forgotten).
    pub(crate) explained: &'static str,
    /// The provider, with the account in brackets where there is one.
    pub(crate) name: &'a str,
    pub(crate) action: &'a str,
    pub(crate) csrf: &'a str,
    pub(crate) connected_at: i64,
}

/// The page a finished sign-in lands on: what to do next, and the account connected.
#[derive(Template)]
#[template(path = "connected.html")]
pub(crate) struct ConnectedPage<'a> {
    pub(crate) title: &'a str,
    /// That it is connected, and what the person does next.
    pub(crate) body: &'a str,
    pub(crate) provider_name: &'a str,
    /// The account's name as the provider gave it, where the sign-in picked one.
    pub(crate) account: Option<&'a str>,
    /// The connections page.
    pub(crate) manage: &'a str,
}

/// A one-message page: expired, refused and the like.
#[derive(Template)]
#[template(path = "message.html")]
pub(crate) struct MessagePage<'a> {
    pub(crate) title: &'a str,
    pub(crate) message: &'a str,
    pub(crate) ok: bool,
    /// Where the person may go next, and the link's words.
    pub(crate) next: Option<(&'a str, &'a str)>,
}

/// The security headers of every browser response.
///
/// No `form-action`: browsers apply it to the redirects after a POST, and Continue's redirect
/// goes to a provider whose authorize endpoint may itself redirect to a login page elsewhere.
pub(crate) fn security_headers(https: bool) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if https {
        headers.insert(
            STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000"),
        );
    }
    headers
}

/// Renders `page` with `status` (headers are added by the browser routes' layer).
pub(crate) fn render<T: Template>(status: StatusCode, page: &T) -> Response {
    match page.render() {
        Ok(body) => (status, Html(body)).into_response(),
        Err(err) => {
            tracing::error!(error = %err, "rendering a page failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response()
        }
    }
}

/// A message page.
pub(crate) fn message(status: StatusCode, title: &str, message: &str) -> Response {
    message_then(status, title, message, None)
}

/// A message page with a link onwards.
pub(crate) fn message_then(
    status: StatusCode,
    title: &str,
    message: &str,
    next: Option<(&str, &str)>,
) -> Response {
    render(
        status,
        &MessagePage {
            title,
            message,
            ok: status.is_success(),
            next,
        },
    )
}
