//! The span of each browser step of a sign-in (connect page, Continue, key form, callbacks,
//! the connections page), when traces are on: named by its route template, so no ticket,
//! connection id, code or state reaches an attribute; its parent a `traceparent` the browser's
//! request carries, if any.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use tracing::field::Empty;

use crate::telemetry::{self, propagate};

pub(super) async fn step(request: Request, next: Next) -> Response {
    if !telemetry::enabled() {
        return next.run(request).await;
    }
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("", MatchedPath::as_str)
        .to_owned();
    let span = tracing::info_span!(
        target: "grantry::spans",
        "sign-in step",
        otel.name = %format_args!("{} {route}", request.method()),
        otel.kind = "server",
        http.request.method = %request.method(),
        http.route = %route,
        http.response.status_code = Empty,
    );
    propagate::continue_trace(&span, None, request.headers());
    let response = telemetry::context::in_request(span.clone(), next.run(request)).await;
    span.record(
        "http.response.status_code",
        i64::from(response.status().as_u16()),
    );
    response
}
