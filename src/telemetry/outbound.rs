//! A request grantry makes (to a provider, to a webhook endpoint) as a client span: its
//! method, whom it was for and the status it got, with the trace passed on in its
//! `traceparent`. The URL is left out: a revocation may carry a token in its query, and a
//! per-site API's host names the person's company. The caller's `tracestate` (its vendors'
//! data) is not passed on to third parties.

use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;

use super::{Traced, context, propagate};

/// Whom a request is for: `provider` (API, token, revocation, metadata) or `webhook`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer<'a> {
    pub(crate) role: &'static str,
    /// The provider's id or the endpoint's name, where the caller knows it.
    pub(crate) name: Option<&'a str>,
}

/// Sends `request`: traced when traces are on, as it is otherwise.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    peer: Peer<'_>,
) -> Result<reqwest::Response, reqwest::Error> {
    if !super::enabled() {
        return request.send().await;
    }
    let (client, request) = request.build_split();
    let mut request = request?;
    let method = request.method().as_str().to_owned();
    let mut attributes = vec![
        KeyValue::new("grantry.peer.role", peer.role),
        KeyValue::new("http.request.method", method.clone()),
    ];
    if let Some(name) = peer.name {
        attributes.push(KeyValue::new("grantry.peer.name", name.to_owned()));
    }
    let name = format!("{method} {}", peer.role);
    let Some(span) = Traced::start(name, SpanKind::Client, attributes, &context::parent()) else {
        return client.execute(request).await;
    };
    if let Some(traceparent) = propagate::traceparent(span.context()) {
        request.headers_mut().insert("traceparent", traceparent);
    }
    let answer = client.execute(request).await;
    match &answer {
        Ok(response) => {
            let status = response.status().as_u16();
            span.set(KeyValue::new(
                "http.response.status_code",
                i64::from(status),
            ));
            if status >= 400 {
                span.set(KeyValue::new("error.type", status.to_string()));
                span.failed();
            }
        }
        Err(e) => {
            let kind = if e.is_timeout() {
                "timeout"
            } else {
                "transport"
            };
            span.set(KeyValue::new("error.type", kind));
            span.failed();
        }
    }
    answer
}
