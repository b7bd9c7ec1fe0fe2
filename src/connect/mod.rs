//! The browser side of a sign-in: `GET/POST /connect/{ticket}`, `GET /oauth/callback` and the
//! "connected" page; `/connections`, where a person sees, reconnects and disconnects what
//! they connected; and `/`, which says what this server is.
//!
//! The connect page checks that the person at the browser is the one the link was issued to,
//! shows what is being connected, and only on Continue (a CSRF-protected POST) writes the flow
//! and sends the browser to the provider. The callback consumes the flow exactly once. A
//! provider connected with an API key gets a key form instead, checked and stored on its POST.

mod account;
mod admission;
mod binding;
mod callback;
mod connected;
mod connections;
mod csrf;
mod errors;
mod home;
mod key_form;
mod login;
mod page;
pub(crate) mod pages;
mod redirect;
mod replay;
mod services;
mod spans;
pub mod ticket;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::extract::{Request, State};
use axum::http::header::{ACCEPT_LANGUAGE, RETRY_AFTER, VARY};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};

use crate::identity::Principal;
use crate::identity::oidc::CONNECTIONS_PATH;
use crate::limits::{Bucket, client_address};
use crate::state::AppState;
use crate::ui::{self, Lang, Reader};
use services::PageServices;

/// The largest form body a browser route reads (413 beyond it).
const FORM_BODY_LIMIT: usize = 16 * 1024;

/// The browser routes, with the security headers on every response, on the pages' share of
/// `state`.
pub(crate) fn router<S: Clone + Send + Sync + 'static>(state: &AppState) -> Router<S> {
    let state = PageServices::taken_from(state);
    let https = state.config.is_https();
    Router::new()
        .route("/", get(home::show))
        .route(
            "/connect/{ticket}",
            get(page::show).post(page::continue_to_provider),
        )
        .route("/connect/{ticket}/key", post(key_form::submit))
        .route("/oauth/callback", get(callback::handle))
        .route("/login/callback", get(login::callback))
        .route("/connected", get(connected::show))
        .route(CONNECTIONS_PATH, get(connections::show))
        .route(
            "/connections/{id}/disconnect",
            get(connections::confirm).post(connections::disconnect_confirmed),
        )
        // Each step in its span, named by its route (never by the ticket or id in its path).
        .route_layer(middleware::from_fn(spans::step))
        // Every form here is a few hundred bytes: a larger body is refused before it is read.
        .layer(DefaultBodyLimit::max(FORM_BODY_LIMIT))
        .layer(middleware::from_fn_with_state(state.clone(), limit))
        .layer(middleware::from_fn_with_state(state.clone(), for_reader))
        .layer(middleware::from_fn(
            move |req: Request, next: Next| async move { harden(next.run(req).await, https) },
        ))
        .with_state(state)
}

/// Renders every page of the request for its reader: the browser's language (its
/// `Accept-Language`, else `--default-language`) under the deployment's brand.
async fn for_reader(State(state): State<PageServices>, request: Request, next: Next) -> Response {
    let lang = request
        .headers()
        .get(ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .and_then(Lang::from_accept_language)
        .unwrap_or(state.config.default_language);
    let reader = Reader {
        lang,
        brand: state.config.brand.clone(),
    };
    let mut response = ui::for_reader(reader, next.run(request)).await;
    response
        .headers_mut()
        .append(VARY, HeaderValue::from_static("accept-language"));
    response
}

/// The per-address limit on browser routes (a 429 page with `Retry-After` beyond it).
async fn limit(State(state): State<PageServices>, request: Request, next: Next) -> Response {
    let address = client_address(&request, &state.config.limits.trusted_proxies);
    match state.limiter.admit_address(Bucket::BrowserAddress, address) {
        Ok(()) => next.run(request).await,
        Err(retry) => {
            let mut page = pages::message(
                StatusCode::TOO_MANY_REQUESTS,
                &ui::t("error-too-many-title"),
                &ui::t("error-too-many-body"),
            );
            page.headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(retry.0));
            page
        }
    }
}

/// Adds the security headers a handler did not set itself.
fn harden(mut response: Response, https: bool) -> Response {
    for (name, value) in &pages::security_headers(https) {
        if !response.headers().contains_key(name) {
            response.headers_mut().insert(name.clone(), value.clone());
        }
    }
    response
}

/// Logs a security event: who and what, with hashed ids, never a secret.
fn security_event(event: &'static str, principal: Option<&Principal>, detail: &str) {
    crate::audit::Audit {
        principal,
        ..Default::default()
    }
    .alarm(event, detail);
}
