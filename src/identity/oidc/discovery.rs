//! OpenID Connect discovery: the issuer's endpoints, read once at start.

use std::time::Duration;

use serde::Deserialize;

/// The parts of the issuer's discovery document grantry uses.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct IssuerMetadata {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    pub(crate) jwks_uri: String,
    #[serde(default)]
    pub(crate) introspection_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: bool,
}

/// Why the issuer cannot be used; each message names the issuer setting.
#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error("--oidc-issuer: cannot read {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("--oidc-issuer: {0}")]
    Unusable(String),
}

/// Fetches and checks `{issuer}/.well-known/openid-configuration`, retrying a few times so
/// that grantry and its issuer may start together.
pub(super) async fn discover(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<IssuerMetadata, DiscoveryError> {
    let url = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    let mut delay = Duration::from_millis(250);
    let mut attempts_left = 5;
    loop {
        let reason = match fetch(http, &url).await {
            Ok(metadata) => return check(metadata, issuer),
            Err(reason) => reason,
        };
        attempts_left -= 1;
        if attempts_left == 0 {
            return Err(DiscoveryError::Unreachable { url, reason });
        }
        tokio::time::sleep(delay).await;
        delay *= 2;
    }
}

async fn fetch(http: &reqwest::Client, url: &str) -> Result<IssuerMetadata, String> {
    let response = http.get(url).send().await.map_err(|e| e.to_string())?;
    if !response.status().is_success() {
        return Err(format!("HTTP {}", response.status()));
    }
    let body = crate::providers::http::read_capped(response)
        .await
        .map_err(|e| e.to_string())?;
    serde_json::from_slice::<IssuerMetadata>(&body)
        .map_err(|e| format!("not a discovery document: {e}"))
}

fn check(metadata: IssuerMetadata, issuer: &str) -> Result<IssuerMetadata, DiscoveryError> {
    // OpenID Connect Discovery §4.3: the document must name exactly the configured issuer,
    // or tokens would be checked against an issuer nobody chose.
    if metadata.issuer != issuer {
        return Err(DiscoveryError::Unusable(format!(
            "the discovery document names issuer `{}`, not `{issuer}`; set --oidc-issuer to \
             exactly the issuer's own spelling",
            metadata.issuer
        )));
    }
    if let Some(methods) = &metadata.code_challenge_methods_supported
        && !methods.iter().any(|m| m == "S256")
    {
        return Err(DiscoveryError::Unusable(
            "the issuer does not support PKCE with S256".into(),
        ));
    }
    Ok(metadata)
}
