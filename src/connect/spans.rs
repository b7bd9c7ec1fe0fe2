//! The span of each browser step of a sign-in (connect page, Continue, key form, callbacks,
//! the connections page), when traces are on: named by its route template, so no ticket,
//! connection id, code or state reaches an attribute; its parent a `traceparent` the browser's
//! request carries, if any.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;

use crate::telemetry::{self, Traced, propagate};

pub(super) async fn step(request: Request, next: Next) -> Response {
    if !telemetry::enabled() {
        return next.run(request).await;
    }
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("", MatchedPath::as_str)
        .to_owned();
    let method = request.method().as_str().to_owned();
    let name = format!("{method} {route}");
    let attributes = vec![
        KeyValue::new("http.request.method", method),
        KeyValue::new("http.route", route),
    ];
    let parent = propagate::caller(None, request.headers());
    let Some(span) = Traced::start(name, SpanKind::Server, attributes, &parent) else {
        return next.run(request).await;
    };
    let response = telemetry::context::in_request(span.clone(), next.run(request)).await;
    let status = i64::from(response.status().as_u16());
    span.set(KeyValue::new("http.response.status_code", status));
    response
}
