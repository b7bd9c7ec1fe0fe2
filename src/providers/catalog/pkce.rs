//! PKCE for entries that say `pkce = "off"` (Stripe, FreshBooks and others take no PKCE):
//! at start, each such provider's authorization-server metadata (RFC 8414) is read once, and
//! one that advertises S256 gets PKCE whatever the entry says. The rest are logged as the
//! weaker setting they are.

use crate::telemetry::outbound::{self, Peer};
use std::time::Duration;

use serde::Deserialize;
use url::Url;

use super::{Catalog, OAuthClient, PkceMode, SignIn};
use crate::providers::ProviderId;
use crate::providers::http::read_capped;
use grantry_base::net::is_loopback;

/// How long reading one metadata document may take at start.
const METADATA_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Deserialize)]
struct Metadata {
    #[serde(default)]
    code_challenge_methods_supported: Vec<String>,
}

impl Catalog {
    /// Gives PKCE to every `pkce = "off"` provider whose metadata advertises S256, and logs
    /// the others once.
    pub(crate) async fn settle_pkce(&mut self, http: &reqwest::Client) {
        let off: Vec<(&ProviderId, &OAuthClient)> = self
            .providers
            .values()
            .filter_map(|p| Some((&p.id, p.oauth().filter(|o| o.pkce == PkceMode::Off)?)))
            .collect();
        let found =
            futures::future::join_all(off.iter().map(|(_, o)| advertises_s256(http, o))).await;
        let upgraded: Vec<ProviderId> = off
            .iter()
            .zip(found)
            .filter(|(_, s256)| *s256)
            .map(|((id, _), _)| (*id).clone())
            .collect();
        for provider in self.providers.values_mut() {
            let SignIn::OAuth(oauth) = &mut provider.sign_in else {
                continue;
            };
            if oauth.pkce != PkceMode::Off {
                continue;
            }
            if upgraded.contains(&provider.id) {
                oauth.pkce = PkceMode::Supported;
                tracing::info!(
                    provider = %provider.id,
                    "pkce = \"off\", but the provider's metadata advertises S256: PKCE is used"
                );
            } else {
                tracing::warn!(
                    provider = %provider.id,
                    "pkce = \"off\": a weaker setting (an intercepted code is not bound to this \
                     client's verifier); keep it only for a provider that takes no PKCE"
                );
            }
        }
    }
}

/// Whether the first metadata document found for `provider` lists S256.
async fn advertises_s256(http: &reqwest::Client, oauth: &OAuthClient) -> bool {
    for url in metadata_urls(oauth) {
        match fetch(http, &url).await {
            Some(metadata) => {
                return metadata
                    .code_challenge_methods_supported
                    .iter()
                    .any(|m| m == "S256");
            }
            None => continue,
        }
    }
    false
}

/// The entry's `metadata_url`; else, from its issuer, the RFC 8414 location (path
/// inserted), the same appended (as many servers publish it) and OpenID Connect discovery's.
fn metadata_urls(oauth: &OAuthClient) -> Vec<Url> {
    if let Some(url) = &oauth.metadata_url {
        return vec![url.clone()];
    }
    let Some(issuer) = oauth
        .issuer
        .as_deref()
        .and_then(|i| Url::parse(i).ok())
        .filter(|i| i.scheme() == "https" || is_loopback(i))
    else {
        return Vec::new();
    };
    let path = issuer.path().trim_end_matches('/');
    let base = issuer.as_str().trim_end_matches('/');
    let mut inserted = issuer.clone();
    inserted.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
    [
        Some(inserted),
        Url::parse(&format!("{base}/.well-known/oauth-authorization-server")).ok(),
        Url::parse(&format!("{base}/.well-known/openid-configuration")).ok(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

async fn fetch(http: &reqwest::Client, url: &Url) -> Option<Metadata> {
    let request = http
        .get(url.clone())
        .timeout(METADATA_TIMEOUT)
        .header("accept", "application/json");
    let peer = Peer {
        role: "provider-metadata",
        name: None,
    };
    let response = outbound::send(request, peer).await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body = read_capped(response).await.ok()?;
    serde_json::from_slice(&body).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_rfc_8414_and_openid_connect_put_it() {
        let mut oauth = Catalog::load(Some("http://127.0.0.1:8080/demo"), None, &[])
            .unwrap()
            .default_provider()
            .oauth()
            .unwrap()
            .clone();
        let urls: Vec<String> = metadata_urls(&oauth).iter().map(Url::to_string).collect();
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:8080/.well-known/oauth-authorization-server/demo",
                "http://127.0.0.1:8080/demo/.well-known/oauth-authorization-server",
                "http://127.0.0.1:8080/demo/.well-known/openid-configuration",
            ]
        );
        oauth.issuer = Some("http://login.example".into());
        assert!(metadata_urls(&oauth).is_empty(), "never over plain http");
        oauth.metadata_url = Some(Url::parse("https://login.example/meta").unwrap());
        assert_eq!(metadata_urls(&oauth).len(), 1);
    }
}
