//! The browser side of a sign-in: `GET/POST /connect/{ticket}`, `GET /oauth/callback` and the
//! "connected" page.
//!
//! The connect page checks that the person at the browser is the one the link was issued to,
//! shows what is being connected, and only on Continue (a CSRF-protected POST) writes the flow
//! and sends the browser to the provider. The callback consumes the flow exactly once.

mod binding;
mod callback;
mod csrf;
mod page;
pub mod pages;
pub mod ticket;

use axum::Router;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::get;

use crate::identity::Principal;
use crate::state::AppState;

/// The browser routes, with the security headers on every response.
pub fn router(state: AppState) -> Router<AppState> {
    let https = state.config.is_https();
    Router::new()
        .route(
            "/connect/{ticket}",
            get(page::show).post(page::continue_to_provider),
        )
        .route("/oauth/callback", get(callback::handle))
        .route("/connected", get(callback::connected))
        .layer(middleware::from_fn(
            move |req: Request, next: Next| async move { harden(next.run(req).await, https) },
        ))
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
    tracing::warn!(
        target: "grantry::audit",
        event,
        principal = principal.map(Principal::tag).unwrap_or_default(),
        detail,
        "security event"
    );
}
