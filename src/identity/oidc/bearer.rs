//! MCP requests as a resource server sees them: `Authorization: Bearer` on every request, a
//! JWT access token checked locally or an opaque one asked about by introspection, and always
//! minted for grantry's own MCP URL. The token itself is never stored, logged or forwarded.

use http::HeaderMap;
use http::header::AUTHORIZATION;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::{JwtError, Oidc};
use crate::config::ClaimMatch;
use crate::identity::{GrantedScopes, McpCaller, Presence, Principal, VerifiedClient};

/// Why an MCP request was not authenticated; each maps to the spec's challenge.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BearerError {
    #[error("no bearer token")]
    Missing,
    #[error("invalid token: {0}")]
    Invalid(&'static str),
    #[error("token expired")]
    Expired,
    #[error("token lacks a required scope")]
    InsufficientScope,
    #[error("the issuer could not be reached to check the token")]
    Unavailable,
}

/// What grantry reads from an access token, whichever way it was checked.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct AccessClaims {
    pub(crate) iss: String,
    pub(crate) sub: String,
    /// RFC 9068 and RFC 7662: space-separated.
    #[serde(default)]
    pub(crate) scope: Option<String>,
    /// Some issuers (Azure AD, Okta) send scopes as an array under `scp`.
    #[serde(default)]
    pub(crate) scp: Option<ScopeList>,
    /// Only ID tokens carry a nonce: one here means an ID token offered as an access token.
    #[serde(default)]
    pub(crate) nonce: Option<serde::de::IgnoredAny>,
    /// The other claims: the client it was issued to (RFC 9068 `client_id`, OpenID's
    /// `azp`), and those `--non-interactive-claim` names.
    #[serde(flatten)]
    pub(crate) other: Map<String, Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum ScopeList {
    Text(String),
    List(Vec<String>),
}

impl AccessClaims {
    /// Whether a person is behind the token: not when it was issued to its client itself
    /// (`sub` is the client's id, as client-credentials tokens have it), nor when a claim
    /// `--non-interactive-claim` names has its value.
    fn presence(&self, non_interactive: &[ClaimMatch]) -> Presence {
        let issued_to_client = ["client_id", "azp"]
            .into_iter()
            .any(|claim| self.other.get(claim).and_then(Value::as_str) == Some(&self.sub));
        let marked = non_interactive
            .iter()
            .any(|m| match self.other.get(&m.claim) {
                Some(Value::String(value)) => *value == m.value,
                Some(Value::Array(values)) => values.iter().any(|v| v.as_str() == Some(&m.value)),
                _ => false,
            });
        if issued_to_client || marked {
            Presence::NoPerson
        } else {
            Presence::Person
        }
    }

    /// The client the token was issued to: OpenID's `azp`, else RFC 9068's `client_id`.
    fn client(&self) -> Option<VerifiedClient> {
        ["azp", "client_id"]
            .into_iter()
            .find_map(|claim| self.other.get(claim).and_then(Value::as_str))
            .filter(|id| !id.is_empty())
            .map(|id| VerifiedClient(id.to_owned()))
    }

    /// The scopes granted, from `scope` and `scp` together.
    fn granted(&self) -> Vec<String> {
        let mut granted: Vec<String> = Vec::new();
        if let Some(scope) = &self.scope {
            granted.extend(scope.split_whitespace().map(str::to_owned));
        }
        match &self.scp {
            Some(ScopeList::Text(text)) => {
                granted.extend(text.split_whitespace().map(str::to_owned))
            }
            Some(ScopeList::List(list)) => granted.extend(list.iter().cloned()),
            None => {}
        }
        granted
    }
}

impl Oidc {
    /// Who is behind an MCP request.
    pub(crate) async fn authenticate(&self, headers: &HeaderMap) -> Result<McpCaller, BearerError> {
        let token = bearer_token(headers)?;
        let claims = if is_jwt(token) {
            self.verify_jwt::<AccessClaims>(token, &self.audience)
                .await
                .map_err(|e| match e {
                    JwtError::Expired => BearerError::Expired,
                    JwtError::Key(super::KeyError::Unavailable(_)) => BearerError::Unavailable,
                    JwtError::Key(super::KeyError::Unknown) => {
                        BearerError::Invalid("unknown signing key")
                    }
                    JwtError::Malformed => BearerError::Invalid("malformed"),
                    JwtError::Algorithm => BearerError::Invalid("algorithm not allowed"),
                    JwtError::Invalid(reason) => BearerError::Invalid(reason),
                })?
        } else {
            self.introspect(token).await?
        };
        if claims.sub.is_empty() {
            return Err(BearerError::Invalid("empty subject"));
        }
        if claims.nonce.is_some() {
            return Err(BearerError::Invalid("an ID token is not an access token"));
        }
        let scopes = GrantedScopes(claims.granted());
        if !scopes.include(&self.settings.required_scopes) {
            return Err(BearerError::InsufficientScope);
        }
        let presence = claims.presence(&self.settings.non_interactive_claims);
        let client = claims.client();
        Ok(McpCaller {
            principal: Principal {
                issuer: claims.iss,
                subject: claims.sub,
            },
            presence,
            scopes: Some(scopes),
            client,
        })
    }
}

/// The token of the one `Authorization: Bearer` header (RFC 6750 §2.1).
fn bearer_token(headers: &HeaderMap) -> Result<&str, BearerError> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Err(BearerError::Missing);
    };
    if values.next().is_some() {
        return Err(BearerError::Invalid("several Authorization headers"));
    }
    let text = value
        .to_str()
        .map_err(|_| BearerError::Invalid("unreadable header"))?;
    let (scheme, token) = text
        .split_once(' ')
        .ok_or(BearerError::Invalid("not a bearer token"))?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(BearerError::Missing);
    }
    let token = token.trim_start_matches(' ');
    let b64token = |c: char| c.is_ascii_alphanumeric() || "-._~+/=".contains(c);
    if token.is_empty() || token.len() > 16 * 1024 || !token.chars().all(b64token) {
        return Err(BearerError::Invalid("malformed"));
    }
    Ok(token)
}

/// A JWS compact serialization has exactly three dot-separated parts.
fn is_jwt(token: &str) -> bool {
    token.split('.').count() == 3
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(AUTHORIZATION, v.parse().unwrap());
        }
        map
    }

    #[test]
    fn only_one_well_formed_bearer_header_is_read() {
        assert_eq!(bearer_token(&headers(&["Bearer abc.def"])), Ok("abc.def"));
        assert_eq!(bearer_token(&headers(&["bearer abc"])), Ok("abc"));
        assert_eq!(bearer_token(&headers(&[])), Err(BearerError::Missing));
        assert_eq!(
            bearer_token(&headers(&["Basic dXNlcjpwYXNz"])),
            Err(BearerError::Missing)
        );
        for bad in ["Bearer ", "Bearer a b", "Bearer a\"b", "Bearer"] {
            assert!(
                matches!(bearer_token(&headers(&[bad])), Err(BearerError::Invalid(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            bearer_token(&headers(&["Bearer a", "Bearer b"])),
            Err(BearerError::Invalid(_))
        ));
    }

    #[test]
    fn scopes_are_read_from_scope_or_scp() {
        let claims = |scope: Option<&str>, scp: Option<ScopeList>| AccessClaims {
            iss: "i".into(),
            sub: "s".into(),
            scope: scope.map(str::to_owned),
            scp,
            nonce: None,
            other: Map::new(),
        };
        let need = vec!["invoices".to_owned()];
        let has =
            |claims: AccessClaims, need: &[String]| GrantedScopes(claims.granted()).include(need);
        assert!(has(claims(Some("openid invoices"), None), &need));
        assert!(has(
            claims(None, Some(ScopeList::List(vec!["invoices".into()]))),
            &need
        ));
        assert!(!has(claims(Some("openid invoice"), None), &need));
        assert!(has(claims(None, None), &[]));
    }

    #[test]
    fn a_token_issued_to_its_client_or_marked_by_a_claim_has_no_person() {
        let claims = |json: Value| -> AccessClaims { serde_json::from_value(json).unwrap() };
        let marks = vec!["gty=client-credentials".parse::<ClaimMatch>().unwrap()];
        let person = claims(json!({"iss": "i", "sub": "alice", "client_id": "app", "azp": "app"}));
        assert_eq!(person.presence(&marks), Presence::Person);
        for no_person in [
            json!({"iss": "i", "sub": "svc", "client_id": "svc"}),
            json!({"iss": "i", "sub": "svc", "azp": "svc"}),
            json!({"iss": "i", "sub": "x@clients", "gty": "client-credentials"}),
            json!({"iss": "i", "sub": "x", "gty": ["refresh", "client-credentials"]}),
        ] {
            assert_eq!(
                claims(no_person.clone()).presence(&marks),
                Presence::NoPerson,
                "{no_person}"
            );
        }
        let other_value = claims(json!({"iss": "i", "sub": "x", "gty": "password"}));
        assert_eq!(other_value.presence(&marks), Presence::Person);
        let unmarked = claims(json!({"iss": "i", "sub": "x@clients", "gty": "client-credentials"}));
        assert_eq!(
            unmarked.presence(&[]),
            Presence::Person,
            "only the claims configured mark"
        );
    }
}
