//! The browser login at the issuer: authorization code + PKCE with a nonce, as a confidential
//! client. The transaction (state, nonce, verifier, where to return) travels sealed in a
//! cookie of its own, so any replica can finish the login and nothing is stored server-side.

use secrecy::{ExposeSecret as _, SecretString};
use serde::{Deserialize, Serialize};

use super::{JwtError, Oidc};
use crate::identity::Principal;
use crate::providers::http::read_capped;
use crate::seal::random_id;

/// A login in progress, kept sealed in the browser.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoginTransaction {
    pub(crate) state: String,
    pub(crate) nonce: String,
    pub(crate) verifier: String,
    /// A grantry connect path or the connections page; checked again on return (see
    /// [`is_return_path`]).
    pub(crate) return_to: String,
}

/// Why a login callback did not sign anyone in.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoginError {
    #[error("the issuer could not be reached: {0}")]
    Unavailable(String),
    #[error("the token endpoint refused the code (HTTP {0})")]
    Refused(u16),
    #[error("the ID token was not acceptable: {0}")]
    IdToken(&'static str),
}

#[derive(Deserialize)]
struct TokenResponse {
    id_token: Option<SecretString>,
}

#[derive(Deserialize)]
struct IdClaims {
    iss: String,
    sub: String,
    aud: Audiences,
    #[serde(default)]
    nonce: Option<String>,
    #[serde(default)]
    azp: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Audiences {
    One(serde::de::IgnoredAny),
    Many(Vec<String>),
}

/// Where a person sees, reconnects and disconnects what they connected.
pub(crate) const CONNECTIONS_PATH: &str = "/connections";

/// Only grantry's own connect pages and the connections page are places to return to: never
/// an absolute URL, a scheme-relative `//host`, a backslash trick or anything with a query.
pub(crate) fn is_return_path(path: &str) -> bool {
    path == CONNECTIONS_PATH
        || path.strip_prefix("/connect/").is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
        })
}

impl Oidc {
    /// A new login transaction and the issuer URL that starts it.
    pub(crate) fn begin_login(&self, return_to: &str) -> (LoginTransaction, String) {
        let (challenge, verifier) = oauth2::PkceCodeChallenge::new_random_sha256();
        let transaction = LoginTransaction {
            state: random_id(),
            nonce: random_id(),
            verifier: verifier.secret().clone(),
            return_to: return_to.to_owned(),
        };
        let mut url = url::Url::parse(&self.metadata.authorization_endpoint)
            .expect("discovery checked the authorization endpoint");
        url.query_pairs_mut()
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.settings.client_id)
            .append_pair("redirect_uri", &self.login_redirect_uri)
            .append_pair("scope", "openid")
            .append_pair("state", &transaction.state)
            .append_pair("nonce", &transaction.nonce)
            .append_pair("code_challenge", challenge.as_str())
            .append_pair("code_challenge_method", "S256");
        (transaction, url.into())
    }

    /// RFC 9207: when the issuer says it sends `iss` on the callback, it must, and it must be
    /// the issuer; a differing `iss` is refused either way.
    pub(crate) fn callback_issuer_ok(&self, iss: Option<&str>) -> bool {
        match iss {
            Some(iss) => iss == self.metadata.issuer,
            None => !self.metadata.authorization_response_iss_parameter_supported,
        }
    }

    /// Redeems the login code and returns who signed in, after checking the ID token's
    /// signature, issuer, audience, expiry and nonce.
    pub(crate) async fn finish_login(
        &self,
        transaction: &LoginTransaction,
        code: &str,
    ) -> Result<Principal, LoginError> {
        let id_token = self.redeem(transaction, code).await?;
        let claims: IdClaims = self
            .verify_jwt(id_token.expose_secret(), &self.settings.client_id)
            .await
            .map_err(|e| {
                LoginError::IdToken(match e {
                    JwtError::Expired => "expired",
                    JwtError::Invalid(reason) => reason,
                    JwtError::Key(_) => "unknown or unavailable signing key",
                    JwtError::Algorithm => "algorithm not allowed",
                    JwtError::Malformed => "malformed",
                })
            })?;
        self.check_id_claims(&claims, &transaction.nonce)?;
        Ok(Principal {
            issuer: claims.iss,
            subject: claims.sub,
        })
    }

    /// The ID token the issuer's token endpoint gives for the code.
    async fn redeem(
        &self,
        transaction: &LoginTransaction,
        code: &str,
    ) -> Result<SecretString, LoginError> {
        let response = self
            .http
            .post(&self.metadata.token_endpoint)
            .basic_auth(
                &self.settings.client_id,
                Some(self.settings.client_secret.expose_secret()),
            )
            .form(&[
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", &self.login_redirect_uri),
                ("code_verifier", &transaction.verifier),
            ])
            .send()
            .await
            .map_err(|e| LoginError::Unavailable(e.without_url().to_string()))?;
        let status = response.status();
        if !status.is_success() {
            return Err(LoginError::Refused(status.as_u16()));
        }
        let body = read_capped(response)
            .await
            .map_err(|e| LoginError::Unavailable(e.to_string()))?;
        let tokens: TokenResponse = serde_json::from_slice(&body)
            .map_err(|_| LoginError::IdToken("unreadable token response"))?;
        tokens.id_token.ok_or(LoginError::IdToken("no ID token"))
    }

    /// What a verified signature leaves to check: the nonce of this login, the authorized
    /// party, a subject.
    fn check_id_claims(&self, claims: &IdClaims, nonce: &str) -> Result<(), LoginError> {
        let nonce_ok = claims
            .nonce
            .as_deref()
            .is_some_and(|n| crate::seal::constant_time_eq(n, nonce));
        if !nonce_ok {
            return Err(LoginError::IdToken("nonce does not match"));
        }
        // OpenID Connect Core §3.1.3.7: with several audiences, `azp` must name grantry.
        let several = matches!(&claims.aud, Audiences::Many(list) if list.len() > 1);
        let azp_ok = match claims.azp.as_deref() {
            Some(azp) => azp == self.settings.client_id,
            None => !several,
        };
        if !azp_ok {
            return Err(LoginError::IdToken("issued to another party (azp)"));
        }
        if claims.sub.is_empty() {
            return Err(LoginError::IdToken("empty subject"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::is_return_path;

    #[test]
    fn only_connect_paths_and_the_connections_page_are_returned_to() {
        assert!(is_return_path("/connect/v1.AbC-_9"));
        assert!(is_return_path("/connections"));
        for bad in [
            "https://evil",
            "//evil",
            "/\\evil",
            "\\/evil",
            "%2F%2Fevil",
            "https:evil",
            "javascript:alert(1)",
            "data:text/html,x",
            "/connect/",
            "/connect//evil",
            "/connect/a?next=//evil",
            "/connect/a\r\nSet-Cookie: x=1",
            "/connect/a\u{2024}b",
            "/connected",
            "/connections/",
            "/connections?x=1",
            "/connectionsx",
        ] {
            assert!(!is_return_path(bad), "{bad}");
        }
    }
}
