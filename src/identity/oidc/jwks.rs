//! The issuer's signing keys (JWKS), cached by `kid`.
//!
//! A token naming a `kid` the cache lacks triggers one refetch (the issuer may have rotated),
//! but at most once per [`MIN_REFETCH`]: a flood of tokens with made-up `kid`s must not turn
//! grantry into a load generator against the issuer. Keys are also refetched once they are
//! older than [`MAX_AGE`], so a key the issuer withdrew stops being trusted.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{JwkSet, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use tokio::sync::{Mutex, RwLock};

use crate::providers::http::read_capped;

const MIN_REFETCH: Duration = Duration::from_secs(10);
const MAX_AGE: Duration = Duration::from_secs(3600);

/// One verification key and the algorithm the issuer pinned it to, if any.
pub struct VerifyingKey {
    pub key: DecodingKey,
    pub algorithm: Option<Algorithm>,
}

#[derive(Default)]
struct Cached {
    by_kid: HashMap<String, Arc<VerifyingKey>>,
    /// Keys without a `kid`, usable only when the set holds exactly one key.
    only: Option<Arc<VerifyingKey>>,
    fetched_at: Option<Instant>,
}

/// Why no key could be found for a token.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("no signing key with this kid")]
    Unknown,
    #[error("the issuer's key set could not be read: {0}")]
    Unavailable(String),
}

pub struct Jwks {
    uri: String,
    http: reqwest::Client,
    cached: RwLock<Cached>,
    fetching: Mutex<()>,
}

impl Jwks {
    pub fn new(uri: String, http: reqwest::Client) -> Self {
        Self {
            uri,
            http,
            cached: RwLock::default(),
            fetching: Mutex::new(()),
        }
    }

    /// The key for `kid`, refetching the set when it is unknown or stale.
    pub async fn key(&self, kid: Option<&str>) -> Result<Arc<VerifyingKey>, KeyError> {
        if let Some(key) = self.lookup(kid, false).await {
            return Ok(key);
        }
        let _one_fetch_at_a_time = self.fetching.lock().await;
        // Another task may have refreshed while this one waited.
        if let Some(key) = self.lookup(kid, false).await {
            return Ok(key);
        }
        let recently = self
            .cached
            .read()
            .await
            .fetched_at
            .is_some_and(|at| at.elapsed() < MIN_REFETCH);
        if !recently {
            let fresh = self.fetch().await?;
            *self.cached.write().await = fresh;
        }
        self.lookup(kid, true).await.ok_or(KeyError::Unknown)
    }

    async fn lookup(&self, kid: Option<&str>, allow_stale: bool) -> Option<Arc<VerifyingKey>> {
        let cached = self.cached.read().await;
        let fresh = cached.fetched_at.is_some_and(|at| at.elapsed() < MAX_AGE);
        if !fresh && !allow_stale {
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
        if matches!(
            jwk.algorithm,
            jsonwebtoken::jwk::AlgorithmParameters::OctetKey(_)
        ) {
            continue; // a shared secret is never a public verification key
        }
        let Ok(key) = DecodingKey::from_jwk(jwk) else {
            continue;
        };
        let algorithm = jwk
            .common
            .key_algorithm
            .and_then(|a| a.to_string().parse::<Algorithm>().ok());
        let entry = Arc::new(VerifyingKey { key, algorithm });
        if let Some(kid) = &jwk.common.key_id {
            by_kid.insert(kid.clone(), entry.clone());
        }
        usable.push(entry);
    }
    let only = (usable.len() == 1).then(|| usable.remove(0));
    Cached {
        by_kid,
        only,
        fetched_at: Some(Instant::now()),
    }
}
