//! The `oidc` identity: an OpenID Connect issuer vouches for MCP callers (bearer access
//! tokens, JWT or opaque) and for browsers (a login at the same issuer).

mod bearer;
mod discovery;
mod introspection;
mod jwks;
pub mod login;

pub(crate) use bearer::BearerError;
pub(crate) use discovery::{DiscoveryError, IssuerMetadata};
pub(crate) use login::LoginTransaction;
pub(crate) use login::{CONNECTIONS_PATH, is_return_path};

use jsonwebtoken::{Algorithm, Validation};
use serde::de::DeserializeOwned;

use crate::config::{Config, OidcSettings};
use jwks::{Jwks, KeyError};

/// Signature algorithms accepted on tokens: asymmetric only. `none` and the HMAC family are
/// never accepted, so a public key can never be used as a shared secret.
const ALLOWED_ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Clock skew tolerated on `exp`, `nbf` and `iat`, in seconds.
pub(crate) const LEEWAY_SECS: u64 = 10;

/// The issuer grantry trusts, its keys, and grantry's own place as a resource server.
pub(crate) struct Oidc {
    pub(crate) settings: OidcSettings,
    pub(crate) metadata: IssuerMetadata,
    /// grantry's canonical MCP URL: the only audience accepted on access tokens.
    pub(crate) audience: String,
    /// Where the issuer sends browsers back after a login.
    pub(crate) login_redirect_uri: String,
    keys: Jwks,
    introspection: introspection::IntrospectionCache,
    http: reqwest::Client,
}

/// Why a JWT was not accepted.
#[derive(Debug, thiserror::Error)]
pub(crate) enum JwtError {
    #[error("malformed token")]
    Malformed,
    #[error("algorithm not allowed")]
    Algorithm,
    #[error("{0}")]
    Key(#[from] KeyError),
    #[error("token expired")]
    Expired,
    #[error("token rejected: {0}")]
    Invalid(&'static str),
}

impl Oidc {
    /// Discovers the issuer named in the configuration.
    pub(crate) async fn start(
        config: &Config,
        settings: OidcSettings,
        http: reqwest::Client,
    ) -> Result<Self, DiscoveryError> {
        let metadata = discovery::discover(&http, &settings.issuer).await?;
        Ok(Self {
            keys: Jwks::new(metadata.jwks_uri.clone(), http.clone()),
            introspection: Default::default(),
            metadata,
            audience: config.mcp_url(),
            login_redirect_uri: format!("{}/login/callback", config.public_url),
            settings,
            http,
        })
    }

    /// Verifies a JWT's signature with the issuer's keys and checks `iss`, `aud`, `exp` and
    /// `nbf`; returns its claims.
    pub(crate) async fn verify_jwt<T: DeserializeOwned>(
        &self,
        token: &str,
        audience: &str,
    ) -> Result<T, JwtError> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| JwtError::Malformed)?;
        if !ALLOWED_ALGORITHMS.contains(&header.alg) {
            return Err(JwtError::Algorithm);
        }
        let key = self.keys.key(header.kid.as_deref()).await?;
        if key.algorithm.is_some_and(|pinned| pinned != header.alg) {
            return Err(JwtError::Algorithm);
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.metadata.issuer]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY_SECS;
        jsonwebtoken::decode::<T>(token, &key.key, &validation)
            .map(|data| data.claims)
            .map_err(|e| {
                use jsonwebtoken::errors::ErrorKind as Kind;
                // Static reasons only: library messages can quote claim values.
                JwtError::Invalid(match e.kind() {
                    Kind::ExpiredSignature => return JwtError::Expired,
                    Kind::InvalidSignature => "bad signature",
                    Kind::InvalidIssuer => "wrong issuer",
                    Kind::InvalidAudience => "wrong audience",
                    Kind::ImmatureSignature => "not yet valid",
                    Kind::MissingRequiredClaim(_) => "a required claim is missing",
                    Kind::InvalidAlgorithm => return JwtError::Algorithm,
                    _ => "malformed claims",
                })
            })
    }
}
