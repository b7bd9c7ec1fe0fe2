//! GET a provider's JSON API with the caller's token: 401 means the token is refused; 429 and
//! 5xx are retried a bounded number of times, honouring `Retry-After` up to a cap, and then
//! reported as [`ApiError::Busy`] so the tool can say when to try again.

use std::time::Duration;

use reqwest::header::RETRY_AFTER;
use serde::de::DeserializeOwned;
use url::Url;

use super::Api;
use crate::providers::http::read_capped;
use crate::providers::invoice::ApiError;

/// Attempts per call: one, then two retries.
const ATTEMPTS: u32 = 3;
/// The longest `Retry-After` passed on to the caller (an HTTP-date one counts as absent).
const MAX_RETRY_AFTER_SECS: u64 = 3600;
/// Longest wait grantry spends inside one tool call before retrying.
const MAX_WAIT: Duration = Duration::from_secs(2);

/// How the token goes in the request.
#[derive(Clone, Copy)]
pub enum Auth {
    Bearer,
    /// `Authorization: Zoho-oauthtoken …`.
    Zoho,
}

pub async fn get_json<T: DeserializeOwned>(
    api: &Api<'_>,
    url: Url,
    auth: Auth,
    headers: &[(&str, &str)],
) -> Result<T, ApiError> {
    send_json(api, reqwest::Method::GET, url, auth, headers, None).await
}

/// Sends a request with an optional JSON body. Only requests that are safe to repeat come
/// here (reads, idempotency-keyed creates, voids), so 429 and 5xx are retried like reads.
pub async fn send_json<T: DeserializeOwned>(
    api: &Api<'_>,
    method: reqwest::Method,
    url: Url,
    auth: Auth,
    headers: &[(&str, &str)],
    body: Option<&serde_json::Value>,
) -> Result<T, ApiError> {
    let mut last = ApiError::Unavailable("no attempt made".into());
    for attempt in 0..ATTEMPTS {
        let mut request = api
            .upstream
            .http()
            .request(method.clone(), url.clone())
            .header("accept", "application/json");
        if let Some(body) = body {
            request = request.json(body);
        }
        request = match auth {
            Auth::Bearer => request.bearer_auth(api.access_token),
            Auth::Zoho => request.header(
                "authorization",
                format!("Zoho-oauthtoken {}", api.access_token),
            ),
        };
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let response = api.upstream.send(request).await?;
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(ApiError::Unauthorized);
        }
        if status == reqwest::StatusCode::FORBIDDEN {
            return Err(ApiError::Forbidden);
        }
        if status == reqwest::StatusCode::NOT_FOUND {
            return Err(ApiError::NotFound);
        }
        if matches!(status.as_u16(), 400 | 409 | 422) {
            return Err(ApiError::Rejected(status.as_u16()));
        }
        if status.as_u16() == 429 || status.is_server_error() {
            let asked = response
                .headers()
                .get(RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(|secs| secs.min(MAX_RETRY_AFTER_SECS));
            let backoff = Duration::from_millis(200 << attempt);
            let wait = asked.map_or(backoff, Duration::from_secs);
            last = ApiError::Busy {
                status: status.as_u16(),
                retry_after_secs: asked.unwrap_or(1).max(1),
            };
            // A provider asking for longer than we would hold the user is told so at once.
            if wait > MAX_WAIT || attempt + 1 == ATTEMPTS {
                return Err(last);
            }
            tokio::time::sleep(wait).await;
            continue;
        }
        if !status.is_success() {
            return Err(ApiError::Unavailable(format!("HTTP {}", status.as_u16())));
        }
        let body = read_capped(response)
            .await
            .map_err(|e| ApiError::Unavailable(e.to_string()))?;
        // Position only: serde's message can quote the provider's data (customer names).
        return serde_json::from_slice(&body).map_err(|e| {
            ApiError::BadResponse(format!(
                "unexpected JSON ({:?} at line {} column {})",
                e.classify(),
                e.line(),
                e.column()
            ))
        });
    }
    Err(last)
}

/// `base` with `segments` appended to its path.
pub fn endpoint(base: &Url, segments: &[&str]) -> Result<Url, ApiError> {
    let mut url = base.clone();
    url.path_segments_mut()
        .map_err(|_| ApiError::BadResponse("api_base cannot take a path".into()))?
        .pop_if_empty()
        .extend(segments);
    Ok(url)
}
