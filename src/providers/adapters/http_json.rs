//! GET a provider's JSON API with the caller's token: 401 means the token is refused; 429 and
//! 5xx are retried a bounded number of times, honouring `Retry-After` up to a cap, and then
//! reported as [`ApiError::Busy`] so the tool can say when to try again.

use std::time::Duration;

use serde::de::DeserializeOwned;
use url::Url;

use super::Api;
use crate::providers::http::read_capped;
use crate::providers::invoice::ApiError;

/// Attempts per call: one, then two retries.
const ATTEMPTS: u32 = 3;
/// The longest `Retry-After` passed on to the caller.
const MAX_RETRY_AFTER_SECS: u64 = 3600;
/// Longest wait grantry spends inside one tool call before retrying.
const MAX_WAIT: Duration = Duration::from_secs(2);

/// How the token goes in the request.
#[derive(Clone, Copy)]
pub(super) enum Auth {
    Bearer,
    /// `Authorization: Zoho-oauthtoken …`.
    Zoho,
    /// HTTP Basic with the API key as the user name and no password (Chargebee).
    BasicKey,
}

pub(super) async fn get_json<T: DeserializeOwned>(
    api: &Api<'_>,
    url: Url,
    auth: Auth,
    headers: &[(&str, &str)],
) -> Result<T, ApiError> {
    let request = JsonRequest {
        auth,
        headers,
        ..JsonRequest::new(reqwest::Method::GET, url)
    };
    send_json(api, &request).await
}

/// One request to a provider's JSON API.
pub(super) struct JsonRequest<'a> {
    pub(crate) method: reqwest::Method,
    pub(crate) url: Url,
    pub(crate) auth: Auth,
    pub(crate) headers: &'a [(&'a str, &'a str)],
    pub(crate) body: Option<&'a serde_json::Value>,
}

impl JsonRequest<'_> {
    /// A request with a bearer token, no extra header and no body.
    pub(super) fn new(method: reqwest::Method, url: Url) -> Self {
        Self {
            method,
            url,
            auth: Auth::Bearer,
            headers: &[],
            body: None,
        }
    }
}

/// What one answer means for the call.
enum Verdict {
    Success,
    Failed(ApiError),
    /// Busy: try again after this long.
    Retry(Duration, ApiError),
}

/// Sends a request with an optional JSON body. Only requests that are safe to repeat come
/// here (reads, idempotency-keyed creates, voids), so 429 and 5xx are retried like reads.
pub(super) async fn send_json<T: DeserializeOwned>(
    api: &Api<'_>,
    request: &JsonRequest<'_>,
) -> Result<T, ApiError> {
    let mut attempt = 0;
    loop {
        let response = api
            .upstream
            .send(build(api, request), &api.provider.id)
            .await?;
        match judge(&response, attempt) {
            Verdict::Success => return decode(response).await,
            Verdict::Failed(e) => return Err(e),
            // A provider asking for longer than we would hold the user is told so at once.
            Verdict::Retry(wait, busy) if wait > MAX_WAIT || attempt + 1 == ATTEMPTS => {
                return Err(busy);
            }
            Verdict::Retry(wait, _) => tokio::time::sleep(wait).await,
        }
        attempt += 1;
    }
}

/// Sends a request whose answer carries nothing to read (a DELETE's 204), once.
pub(super) async fn send_for_status(
    api: &Api<'_>,
    request: &JsonRequest<'_>,
) -> Result<(), ApiError> {
    let response = api
        .upstream
        .send(build(api, request), &api.provider.id)
        .await?;
    match judge(&response, ATTEMPTS - 1) {
        Verdict::Success => Ok(()),
        Verdict::Failed(e) | Verdict::Retry(_, e) => Err(e),
    }
}

fn build(api: &Api<'_>, request: &JsonRequest<'_>) -> reqwest::RequestBuilder {
    let mut built = api
        .upstream
        .http()
        .request(request.method.clone(), request.url.clone())
        .header("accept", "application/json");
    if let Some(body) = request.body {
        built = built.json(body);
    }
    built = match request.auth {
        Auth::Bearer => built.bearer_auth(api.access_token),
        Auth::Zoho => built.header(
            "authorization",
            format!("Zoho-oauthtoken {}", api.access_token),
        ),
        Auth::BasicKey => built.basic_auth(api.access_token, Some("")),
    };
    for (name, value) in request.headers {
        built = built.header(*name, *value);
    }
    built
}

fn judge(response: &reqwest::Response, attempt: u32) -> Verdict {
    let status = response.status();
    match status.as_u16() {
        401 => Verdict::Failed(ApiError::Unauthorized),
        403 => Verdict::Failed(ApiError::Forbidden),
        404 => Verdict::Failed(ApiError::NotFound),
        code @ (400 | 409 | 422) => Verdict::Failed(ApiError::Rejected(code)),
        code if code == 429 || status.is_server_error() => {
            let asked = grantry_base::net::retry_after(response.headers())
                .map(|wait| wait.as_secs().min(MAX_RETRY_AFTER_SECS));
            let backoff = Duration::from_millis(200 << attempt);
            let busy = ApiError::Busy {
                status: code,
                retry_after_secs: asked.unwrap_or(1).max(1),
            };
            Verdict::Retry(asked.map_or(backoff, Duration::from_secs), busy)
        }
        _ if status.is_success() => Verdict::Success,
        code => Verdict::Failed(ApiError::Unavailable(format!("HTTP {code}"))),
    }
}

async fn decode<T: DeserializeOwned>(response: reqwest::Response) -> Result<T, ApiError> {
    let body = read_capped(response)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    // Position only: serde's message can quote the provider's data (customer names).
    serde_json::from_slice(&body).map_err(|e| {
        ApiError::BadResponse(format!(
            "unexpected JSON ({:?} at line {} column {})",
            e.classify(),
            e.line(),
            e.column()
        ))
    })
}

/// `base` with `segments` appended to its path.
pub(super) fn endpoint(base: &Url, segments: &[&str]) -> Result<Url, ApiError> {
    let mut url = base.clone();
    url.path_segments_mut()
        .map_err(|_| ApiError::BadResponse("api_base cannot take a path".into()))?
        .pop_if_empty()
        .extend(segments);
    Ok(url)
}
