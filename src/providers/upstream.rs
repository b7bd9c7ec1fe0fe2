//! How adapters reach a provider's API: over the network, or (benchmarks only,
//! `--demo-api-in-process`) the demo billing API answered inside this process, which skips
//! the loopback HTTP round trip so a benchmark shows grantry's own cost. Built once at start.

use tower::ServiceExt;

use super::http::transport_reason;
use super::invoice::ApiError;
use crate::ids::ProviderId;
use crate::telemetry::outbound::{self, Peer};

/// The way to every provider API.
#[derive(Clone)]
pub(crate) struct Upstream {
    http: reqwest::Client,
    in_process: Option<axum::Router>,
}

impl Upstream {
    /// Over the network, with grantry's provider HTTP client.
    pub(crate) fn network(http: reqwest::Client) -> Self {
        Self {
            http,
            in_process: None,
        }
    }

    /// Every API request answered by `router` instead (benchmarks: the demo's own routes).
    pub(crate) fn in_process(http: reqwest::Client, router: axum::Router) -> Self {
        Self {
            http,
            in_process: Some(router),
        }
    }

    /// The client requests are built with.
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends `request` to `provider`'s API, and its answer as the network would give it.
    pub(crate) async fn send(
        &self,
        request: reqwest::RequestBuilder,
        provider: &ProviderId,
    ) -> Result<reqwest::Response, ApiError> {
        let peer = Peer {
            role: "provider-api",
            name: Some(provider.as_str()),
        };
        match &self.in_process {
            Some(router) => answer_in_process(router, request).await,
            None => outbound::send(request, peer)
                .await
                .map_err(|e| ApiError::Unavailable(transport_reason(&e))),
        }
    }
}

/// Answers `request` with `router` instead of the network, as the same `reqwest::Response`
/// the network would give.
async fn answer_in_process(
    router: &axum::Router,
    request: reqwest::RequestBuilder,
) -> Result<reqwest::Response, ApiError> {
    let request = request
        .build()
        .map_err(|e| ApiError::Unavailable(transport_reason(&e)))?;
    let mut outgoing = axum::http::Request::builder()
        .method(request.method().clone())
        .uri(request.url().as_str());
    for (name, value) in request.headers() {
        outgoing = outgoing.header(name, value);
    }
    let body = request
        .body()
        .and_then(reqwest::Body::as_bytes)
        .map(bytes::Bytes::copy_from_slice)
        .unwrap_or_default();
    let outgoing = outgoing
        .body(axum::body::Body::from(body))
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    let answer = router
        .clone()
        .oneshot(outgoing)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    let (parts, body) = answer.into_parts();
    let bytes = axum::body::to_bytes(body, super::http::MAX_RESPONSE_BYTES)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    Ok(http::Response::from_parts(parts, bytes).into())
}
