//! The issuer's signing keys (JWKS), cached by `kid`.
//!
//! A token naming a `kid` the cache lacks triggers one refetch (the issuer may have rotated),
//! but fetches are attempted at most once per [`MIN_REFETCH`], failed or not: a flood of
//! tokens with made-up `kid`s, or an issuer that is down, must not turn grantry into a load
//! generator against the issuer. Keys are refetched once they are older than [`MAX_AGE`], so
//! a key the issuer withdrew stops being trusted; while the issuer cannot be reached, keys up
//! to [`STALE_GRACE`] old still serve, so a short outage at the issuer is not one at grantry.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{JwkSet, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use tokio::sync::{Mutex, RwLock};

use crate::providers::http::read_capped;

const MIN_REFETCH: Duration = Duration::from_secs(10);
const MAX_AGE: Duration = Duration::from_secs(3600);
const STALE_GRACE: Duration = Duration::from_secs(24 * 3600);

/// One verification key and the algorithm the issuer pinned it to, if any.
pub(super) struct VerifyingKey {
    pub(crate) key: DecodingKey,
    pub(crate) algorithm: Option<Algorithm>,
}

#[derive(Default)]
struct Cached {
    by_kid: HashMap<String, Arc<VerifyingKey>>,
    /// Keys without a `kid`, usable only when the set holds exactly one key.
    only: Option<Arc<VerifyingKey>>,
    fetched_at: Option<Instant>,
    /// The last fetch attempt, whether it worked or not.
    attempted_at: Option<Instant>,
    /// Whether that attempt failed.
    unreachable: bool,
}

/// Why no key could be found for a token.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyError {
    #[error("no signing key with this kid")]
    Unknown,
    #[error("the issuer's key set could not be read: {0}")]
    Unavailable(String),
}

pub(super) struct Jwks {
    uri: String,
    http: reqwest::Client,
    cached: RwLock<Cached>,
    fetching: Mutex<()>,
}

impl Jwks {
    pub(super) fn new(uri: String, http: reqwest::Client) -> Self {
        Self {
            uri,
            http,
            cached: RwLock::default(),
            fetching: Mutex::new(()),
        }
    }

    /// The key for `kid`, refetching the set when it is unknown or stale.
    pub(super) async fn key(&self, kid: Option<&str>) -> Result<Arc<VerifyingKey>, KeyError> {
        if let Some(key) = self.lookup(kid, MAX_AGE).await {
            return Ok(key);
        }
        let _one_fetch_at_a_time = self.fetching.lock().await;
        // Another task may have refreshed while this one waited.
        if let Some(key) = self.lookup(kid, MAX_AGE).await {
            return Ok(key);
        }
        let (attempted_recently, unreachable) = {
            let cached = self.cached.read().await;
            let recently = cached
                .attempted_at
                .is_some_and(|at| at.elapsed() < MIN_REFETCH);
            (recently, cached.unreachable)
        };
        let failure = if attempted_recently {
            unreachable.then(|| KeyError::Unavailable("the last attempt failed".into()))
        } else {
            match self.fetch().await {
                Ok(fresh) => {
                    *self.cached.write().await = fresh;
                    None
                }
                Err(e) => {
                    let mut cached = self.cached.write().await;
                    cached.attempted_at = Some(Instant::now());
                    cached.unreachable = true;
                    Some(e)
                }
            }
        };
        if let Some(key) = self.lookup(kid, STALE_GRACE).await {
            return Ok(key);
        }
        Err(failure.unwrap_or(KeyError::Unknown))
    }

    /// A cached key, if the set is younger than `max_age`.
    async fn lookup(&self, kid: Option<&str>, max_age: Duration) -> Option<Arc<VerifyingKey>> {
        let cached = self.cached.read().await;
        if cached.fetched_at.is_none_or(|at| at.elapsed() >= max_age) {
            return None;
        }
        match kid {
            Some(kid) => cached.by_kid.get(kid).cloned(),
            None => cached.only.clone(),
        }
    }

    async fn fetch(&self) -> Result<Cached, KeyError> {
        let unavailable = |e: String| KeyError::Unavailable(e);
        let response = self
            .http
            .get(&self.uri)
            .send()
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        if !response.status().is_success() {
            return Err(unavailable(format!("HTTP {}", response.status())));
        }
        let body = read_capped(response)
            .await
            .map_err(|e| unavailable(e.to_string()))?;
        let set: JwkSet = serde_json::from_slice(&body)
            .map_err(|e| unavailable(format!("not a JWK set: {e}")))?;
        Ok(parse(&set))
    }
}

/// Keeps the signature keys grantry can use; skips encryption keys and symmetric ones.
fn parse(set: &JwkSet) -> Cached {
    let mut by_kid = HashMap::new();
    let mut usable = Vec::new();
    for jwk in &set.keys {
        if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
            continue;
        }
        if jwk
            .common
            .key_operations
            .as_ref()
            .is_some_and(|ops| !ops.contains(&KeyOperations::Verify))
        {
            continue;
        }
        if matches!(
            jwk.algorithm,
            jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
        ) {
            continue; // a shared secret is never a public verification key
        }
        let Ok(key) = DecodingKey::from_jwk(jwk) else {
            continue;
        };
        // A key pinned to an algorithm that is not a signature algorithm (RSA-OAEP, say) is
        // an encryption key, whatever its `use` says.
        let algorithm = match jwk.common.key_algorithm {
            None => None,
            Some(pinned) => match pinned.to_string().parse::<Algorithm>() {
                Ok(algorithm) => Some(algorithm),
                Err(_) => continue,
            },
        };
        let entry = Arc::new(VerifyingKey { key, algorithm });
        if let Some(kid) = &jwk.common.key_id {
            by_kid.insert(kid.clone(), entry.clone());
        }
        usable.push(entry);
    }
    let only = (usable.len() == 1).then(|| usable.remove(0));
    let now = Instant::now();
    Cached {
        by_kid,
        only,
        fetched_at: Some(now),
        attempted_at: Some(now),
        unreachable: false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// RFC 7517 appendix A.1's RSA public key, under kid `k1`.
    const SET: &str = r#"{"keys":[{"kty":"RSA","kid":"k1","use":"sig","alg":"RS256","e":"AQAB",
      "n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"}]}"#;

    /// A JWKS endpoint on loopback that counts its requests and can be made to fail.
    async fn issuer(fail: bool) -> (String, Arc<AtomicUsize>) {
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                async move {
                    if fail {
                        Err(http::StatusCode::SERVICE_UNAVAILABLE)
                    } else {
                        Ok(SET)
                    }
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        (url, hits)
    }

    #[tokio::test]
    async fn made_up_kids_cost_the_issuer_one_fetch_per_interval() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (url, hits) = issuer(false).await;
        let jwks = Jwks::new(url, crate::providers::http::client());
        assert!(jwks.key(Some("k1")).await.is_ok());
        for kid in ["a", "b", "c", "d", "e"] {
            assert!(matches!(jwks.key(Some(kid)).await, Err(KeyError::Unknown)));
        }
        assert!(jwks.key(Some("k1")).await.is_ok());
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn an_unreachable_issuer_is_asked_once_per_interval() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let (url, hits) = issuer(true).await;
        let jwks = Jwks::new(url, crate::providers::http::client());
        for _ in 0..5 {
            assert!(matches!(
                jwks.key(Some("k1")).await,
                Err(KeyError::Unavailable(_))
            ));
        }
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }
}
