//! Reading an answer from the network with a bound: every body the bridge reads (the MCP
//! server's answers, the authorization metadata, registration and token answers) goes
//! through here, so no server can make the bridge hold more than the bound.

use serde_json::Value;

/// Why an answer's body was not read.
#[derive(Debug, thiserror::Error)]
pub(super) enum BodyError {
    #[error("{what} is larger than {} KiB; not read", limit >> 10)]
    TooLarge { what: &'static str, limit: usize },
    #[error("reading {what}: {reason}")]
    Transport { what: &'static str, reason: String },
    #[error("{what} is not JSON")]
    NotJson { what: &'static str },
}

/// The body of `response`, `what` by name in the error, at most `limit` bytes: a longer one is
/// refused as soon as its length says so, or as soon as it has come past the bound.
pub(super) async fn read(
    mut response: reqwest::Response,
    what: &'static str,
    limit: usize,
) -> Result<Vec<u8>, BodyError> {
    let too_large = BodyError::TooLarge { what, limit };
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(too_large);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| BodyError::Transport {
        what,
        reason: grantry_base::net::transport_reason(&e),
    })? {
        if body.len() + chunk.len() > limit {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The body of `response` as JSON, read as [`read`] does.
pub(super) async fn json(
    response: reqwest::Response,
    what: &'static str,
    limit: usize,
) -> Result<Value, BodyError> {
    let body = read(response, what, limit).await?;
    serde_json::from_slice(&body).map_err(|_| BodyError::NotJson { what })
}
