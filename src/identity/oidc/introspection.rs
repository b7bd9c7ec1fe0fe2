//! RFC 7662 introspection for opaque access tokens: grantry asks the issuer, authenticating
//! as its login client, and accepts only an active token for its own audience.
//!
//! Answers are cached by the token's hash (an accepted token until it expires, at most a
//! minute; a refused one for a few seconds), at most [`MAX_CACHED`] of them, and at most
//! [`MAX_CONCURRENT`] questions are in flight: a stream of garbage tokens costs the issuer
//! little, and a user's calls do not each cost a round trip.

use secrecy::ExposeSecret as _;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::sync::Semaphore;

use super::bearer::{AccessClaims, BearerError, ScopeList};
use super::{LEEWAY_SECS, Oidc};
use crate::providers::http::read_capped;
use crate::seal::digest;
use grantry_base::clock::unix_now;

const MAX_CACHED: usize = 10_000;
const MAX_CONCURRENT: usize = 32;
const MAX_POSITIVE: Duration = Duration::from_secs(60);
const NEGATIVE: Duration = Duration::from_secs(5);

type Answer = Result<AccessClaims, BearerError>;

/// Recent introspection answers, keyed by the hash of the token (never the token), each with
/// the instant it stops counting.
pub(super) struct IntrospectionCache {
    answers: Mutex<HashMap<String, (Instant, Answer)>>,
    permits: Semaphore,
}

impl Default for IntrospectionCache {
    fn default() -> Self {
        Self {
            answers: Mutex::default(),
            permits: Semaphore::new(MAX_CONCURRENT),
        }
    }
}

impl IntrospectionCache {
    fn get(&self, key: &str) -> Option<Answer> {
        let answers = self.answers.lock().expect("cache lock is never poisoned");
        answers
            .get(key)
            .filter(|(until, _)| Instant::now() < *until)
            .map(|(_, answer)| answer.clone())
    }

    fn put(&self, key: String, answer: &Answer, exp: Option<i64>) {
        let ttl = match answer {
            Err(BearerError::Unavailable) => return, // ask again next time
            Err(_) => NEGATIVE,
            Ok(_) => {
                let left = exp.map_or(MAX_POSITIVE.as_secs(), |exp| {
                    (exp - unix_now()).clamp(0, 60) as u64
                });
                Duration::from_secs(left).min(MAX_POSITIVE)
            }
        };
        let mut answers = self.answers.lock().expect("cache lock is never poisoned");
        if answers.len() >= MAX_CACHED {
            let now = Instant::now();
            answers.retain(|_, (until, _)| now < *until);
            if answers.len() >= MAX_CACHED {
                answers.clear();
            }
        }
        answers.insert(key, (Instant::now() + ttl, answer.clone()));
    }
}

#[derive(Debug, Deserialize)]
struct Introspection {
    active: bool,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    iss: Option<String>,
    #[serde(default)]
    aud: Option<Audience>,
    #[serde(default)]
    exp: Option<i64>,
    #[serde(default)]
    nbf: Option<i64>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    token_type: Option<String>,
    /// The other members: `client_id`, and those `--non-interactive-claim` names.
    #[serde(flatten)]
    other: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

impl Audience {
    fn contains(&self, wanted: &str) -> bool {
        match self {
            Audience::One(one) => one == wanted,
            Audience::Many(many) => many.iter().any(|a| a == wanted),
        }
    }
}

impl Oidc {
    pub(super) async fn introspect(&self, token: &str) -> Result<AccessClaims, BearerError> {
        let key = digest("grantry/introspected-token/v1", &[token.as_bytes()]);
        if let Some(answer) = self.introspection.get(&key) {
            return answer;
        }
        let _permit = self
            .introspection
            .permits
            .acquire()
            .await
            .map_err(|_| BearerError::Unavailable)?;
        let (answer, exp) = match self.ask_issuer(token).await {
            Ok(found) => {
                let exp = found.exp;
                let accepted = accept(found, &self.metadata.issuer, &self.audience, unix_now());
                (accepted, exp)
            }
            Err(e) => (Err(e), None),
        };
        self.introspection.put(key, &answer, exp);
        answer
    }

    async fn ask_issuer(&self, token: &str) -> Result<Introspection, BearerError> {
        let Some(endpoint) = &self.metadata.introspection_endpoint else {
            return Err(BearerError::Invalid(
                "opaque token and the issuer offers no introspection",
            ));
        };
        let response = self
            .http
            .post(endpoint)
            .basic_auth(
                &self.settings.client_id,
                Some(self.settings.client_secret.expose_secret()),
            )
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|_| BearerError::Unavailable)?;
        if !response.status().is_success() {
            tracing::warn!(status = %response.status(), "token introspection refused grantry");
            return Err(BearerError::Unavailable);
        }
        let body = read_capped(response)
            .await
            .map_err(|_| BearerError::Unavailable)?;
        serde_json::from_slice(&body).map_err(|_| BearerError::Unavailable)
    }
}

/// Whether an introspection answer admits a request to `audience` (grantry's MCP URL).
fn accept(
    answer: Introspection,
    issuer: &str,
    audience: &str,
    now: i64,
) -> Result<AccessClaims, BearerError> {
    if !answer.active {
        return Err(BearerError::Invalid("inactive"));
    }
    // A refresh token (or anything but an access token) is not a credential for /mcp.
    let is_access_token = |t: &str| {
        t.eq_ignore_ascii_case("bearer")
            || t == "access_token"
            || t == "urn:ietf:params:oauth:token-type:access_token"
    };
    if answer
        .token_type
        .as_deref()
        .is_some_and(|t| !is_access_token(t))
    {
        return Err(BearerError::Invalid("not an access token"));
    }
    let iss = answer.iss.unwrap_or_else(|| issuer.to_owned());
    if iss != issuer {
        return Err(BearerError::Invalid("wrong issuer"));
    }
    if !answer.aud.is_some_and(|aud| aud.contains(audience)) {
        return Err(BearerError::Invalid("wrong audience"));
    }
    let leeway = LEEWAY_SECS as i64;
    if answer.exp.is_some_and(|exp| exp + leeway < now) {
        return Err(BearerError::Expired);
    }
    if answer.nbf.is_some_and(|nbf| nbf - leeway > now) {
        return Err(BearerError::Invalid("not yet valid"));
    }
    let sub = answer.sub.ok_or(BearerError::Invalid("no subject"))?;
    Ok(AccessClaims {
        iss,
        sub,
        scope: answer.scope,
        scp: None::<ScopeList>,
        nonce: None,
        other: answer.other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ISSUER: &str = "https://id.example";
    const MCP: &str = "https://grantry.example/mcp";

    fn answer(json: serde_json::Value) -> Introspection {
        serde_json::from_value(json).unwrap()
    }

    fn good() -> serde_json::Value {
        serde_json::json!({"active": true, "sub": "alice", "iss": ISSUER, "aud": MCP,
            "exp": 2_000, "scope": "invoices", "token_type": "Bearer"})
    }

    #[test]
    fn only_an_active_access_token_for_grantry_from_the_issuer_passes() {
        let ok = accept(answer(good()), ISSUER, MCP, 1_000).unwrap();
        assert_eq!((ok.iss.as_str(), ok.sub.as_str()), (ISSUER, "alice"));
        let with = |key: &str, value: serde_json::Value| {
            let mut json = good();
            json[key] = value;
            accept(answer(json), ISSUER, MCP, 1_000)
        };
        let without = |key: &str| {
            let mut json = good();
            json.as_object_mut().unwrap().remove(key);
            accept(answer(json), ISSUER, MCP, 1_000)
        };
        assert!(with("active", false.into()).is_err());
        assert!(with("aud", "https://other.example/mcp".into()).is_err());
        assert!(
            without("aud").is_err(),
            "no audience is no audience of ours"
        );
        assert!(with("aud", serde_json::json!(["x", MCP])).is_ok());
        assert!(with("iss", "https://evil.example".into()).is_err());
        assert!(without("iss").is_ok(), "the issuer's own endpoint answered");
        assert_eq!(with("exp", 900.into()).unwrap_err(), BearerError::Expired);
        assert!(with("token_type", "refresh_token".into()).is_err());
        assert!(without("sub").is_err());
    }
}
