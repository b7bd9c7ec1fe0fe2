//! The outbound HTTP client for providers: no redirects (a token endpoint that redirects is an
//! SSRF vector), bounded timeouts, and a cap on how much of a response is read.

use std::time::Duration;

/// Total time allowed for one call to a provider.
pub(crate) const PROVIDER_TIMEOUT: Duration = Duration::from_secs(10);
/// Most bytes read from one provider response.
pub(crate) const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// Builds the client every provider call goes through.
pub fn client() -> reqwest::Client {
    // reqwest is built without a crypto provider; a program embedding grantry's state (the
    // fuzz targets, the benchmark's tools) gets ring's, as the binary does.
    install_tls_provider();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(5))
        .timeout(PROVIDER_TIMEOUT)
        .user_agent(concat!("grantry/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("the TLS provider is installed before the HTTP client is built")
}

/// Why a call to a provider did not give a usable answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OutboundError {
    #[error("provider unreachable or timed out: {0}")]
    Transport(String),
    #[error("provider answered HTTP {0}")]
    Status(u16),
    #[error("provider response larger than {MAX_RESPONSE_BYTES} bytes")]
    TooLarge,
}

/// Reads a response body, refusing more than [`MAX_RESPONSE_BYTES`].
pub(crate) async fn read_capped(mut response: reqwest::Response) -> Result<Vec<u8>, OutboundError> {
    if response
        .content_length()
        .is_some_and(|len| len > MAX_RESPONSE_BYTES as u64)
    {
        return Err(OutboundError::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| OutboundError::Transport(transport_reason(&e)))?
    {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(OutboundError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

pub(crate) use grantry_base::net::install_tls_provider;
pub(crate) use grantry_base::net::transport_reason;
