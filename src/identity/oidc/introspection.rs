//! RFC 7662 introspection for opaque access tokens: grantry asks the issuer, authenticating
//! as its login client, and accepts only an active token for its own audience.

use serde::Deserialize;

use super::bearer::{AccessClaims, BearerError, ScopeList};
use super::{LEEWAY_SECS, Oidc};
use crate::clock::unix_now;
use crate::providers::http::read_capped;

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
        let Some(endpoint) = &self.metadata.introspection_endpoint else {
            return Err(BearerError::Invalid(
                "opaque token and the issuer offers no introspection",
            ));
        };
        let response = self
            .http
            .post(endpoint)
            .basic_auth(&self.settings.client_id, Some(&self.settings.client_secret))
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
        let answer: Introspection =
            serde_json::from_slice(&body).map_err(|_| BearerError::Unavailable)?;
        self.accept(answer, unix_now())
    }

    fn accept(&self, answer: Introspection, now: i64) -> Result<AccessClaims, BearerError> {
        if !answer.active {
            return Err(BearerError::Invalid("inactive"));
        }
        let iss = answer.iss.unwrap_or_else(|| self.metadata.issuer.clone());
        if iss != self.metadata.issuer {
            return Err(BearerError::Invalid("wrong issuer"));
        }
        if !answer.aud.is_some_and(|aud| aud.contains(&self.audience)) {
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
        })
    }
}
