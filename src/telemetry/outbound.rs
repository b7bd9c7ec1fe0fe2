//! A request grantry makes (to a provider, to a webhook endpoint) as a client span: its
//! method, whom it was for and the status it got, with the trace passed on in its
//! `traceparent`. The URL is left out: a revocation may carry a token in its query, and a
//! per-site API's host names the person's company. The caller's `tracestate` (its vendors'
//! data) is not passed on to third parties.

use tracing::field::Empty;

/// Whom a request is for: `provider` (API, token, revocation, metadata) or `webhook`.
#[derive(Debug, Clone, Copy)]
pub struct Peer<'a> {
    pub role: &'static str,
    /// The provider's id or the endpoint's name, where the caller knows it.
    pub name: Option<&'a str>,
}

/// Sends `request`: traced when traces are on, as it is otherwise.
pub async fn send(
    request: reqwest::RequestBuilder,
    peer: Peer<'_>,
) -> Result<reqwest::Response, reqwest::Error> {
    if !super::enabled() {
        return request.send().await;
    }
    let (client, request) = request.build_split();
    let mut request = request?;
    let span = tracing::info_span!(
        target: "grantry::spans",
        parent: super::context::parent(),
        "outbound",
        otel.name = %format_args!("{} {}", request.method(), peer.role),
        otel.kind = "client",
        http.request.method = %request.method(),
        grantry.peer.role = peer.role,
        grantry.peer.name = peer.name,
        http.response.status_code = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    );
    super::propagate::inject(&span, request.headers_mut());
    request.headers_mut().remove("tracestate");
    let answer = client.execute(request).await;
    match &answer {
        Ok(response) => {
            let status = response.status().as_u16();
            span.record("http.response.status_code", i64::from(status));
            if status >= 400 {
                span.record("error.type", status.to_string().as_str());
                span.record("otel.status_code", "ERROR");
            }
        }
        Err(e) => {
            span.record(
                "error.type",
                if e.is_timeout() {
                    "timeout"
                } else {
                    "transport"
                },
            );
            span.record("otel.status_code", "ERROR");
        }
    }
    answer
}
