//! The identity settings: `dev` only on loopback, `oidc` with an issuer and a login client.

use std::fmt;
use std::net::SocketAddr;

use url::Url;

use super::{ConfigError, IdentityMode, bad};

/// The OpenID Connect issuer grantry trusts, and the client it uses for browser logins.
#[derive(Clone)]
pub struct OidcSettings {
    /// The issuer exactly as its discovery document must spell it (no trailing slash added).
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
    /// Scopes every MCP access token must carry.
    pub required_scopes: Vec<String>,
}

impl fmt::Debug for OidcSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OidcSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("required_scopes", &self.required_scopes)
            .finish()
    }
}

impl OidcSettings {
    pub(super) fn resolve(
        issuer: Option<String>,
        client_id: Option<String>,
        client_secret: Option<String>,
        required_scopes: Vec<String>,
        public_url: &str,
    ) -> Result<Self, ConfigError> {
        let issuer_setting = "--oidc-issuer (GRANTRY_OIDC_ISSUER)";
        let issuer = issuer.ok_or_else(|| bad(issuer_setting, "oidc identity needs an issuer"))?;
        let url =
            Url::parse(&issuer).map_err(|e| bad(issuer_setting, format!("`{issuer}`: {e}")))?;
        if url.query().is_some() || url.fragment().is_some() {
            return Err(bad(issuer_setting, "must not carry a query or a fragment"));
        }
        if !is_https_or_loopback(&url) {
            return Err(bad(
                issuer_setting,
                "must be https (http only on a loopback address, for local testing)",
            ));
        }
        let public = Url::parse(public_url).expect("public URL validated before");
        if !is_https_or_loopback(&public) {
            return Err(bad(
                "--public-url (GRANTRY_PUBLIC_URL)",
                "oidc identity needs an https public URL (http only on a loopback address): \
                 session cookies must be Secure",
            ));
        }
        let client_id = client_id.filter(|s| !s.is_empty()).ok_or_else(|| {
            bad(
                "--oidc-client-id (GRANTRY_OIDC_CLIENT_ID)",
                "oidc identity needs the client id grantry signs browsers in with",
            )
        })?;
        if format!("{public_url}/mcp") == client_id {
            return Err(bad(
                "--oidc-client-id (GRANTRY_OIDC_CLIENT_ID)",
                "must not be grantry's MCP URL: ID tokens for the login client would then look \
                 like access tokens for grantry",
            ));
        }
        // RFC 6749 §3.3 scope-token: they are written into WWW-Authenticate as they are.
        let scope_char = |c: char| c == '!' || ('#'..='[').contains(&c) || (']'..='~').contains(&c);
        if let Some(bad_scope) = required_scopes
            .iter()
            .find(|s| s.is_empty() || !s.chars().all(scope_char))
        {
            return Err(bad(
                "--oidc-scopes (GRANTRY_OIDC_SCOPES)",
                format!(
                    "`{bad_scope}` is not a scope (printable ASCII without spaces, `\"` or `\\`)"
                ),
            ));
        }
        let client_secret = client_secret.filter(|s| !s.is_empty()).ok_or_else(|| {
            bad(
                "GRANTRY_OIDC_CLIENT_SECRET",
                "oidc identity needs the login client's secret in this environment variable",
            )
        })?;
        Ok(Self {
            issuer,
            client_id,
            client_secret,
            required_scopes,
        })
    }
}

fn is_https_or_loopback(url: &Url) -> bool {
    url.scheme() == "https" || (url.scheme() == "http" && is_loopback_host(url))
}

fn is_loopback_host(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(name)) => name == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// `dev` treats every caller as one local user, so it must not be reachable from elsewhere.
pub(super) fn check_dev(
    identity: IdentityMode,
    listen: SocketAddr,
    public_url: &str,
) -> Result<(), ConfigError> {
    if identity != IdentityMode::Dev {
        return Ok(());
    }
    let public_is_loopback = Url::parse(public_url).is_ok_and(|u| is_loopback_host(&u));
    // Behind a reverse proxy the listen address is loopback while the world reaches grantry:
    // the public URL must be local too.
    if !public_is_loopback {
        return Err(bad(
            "--identity (GRANTRY_IDENTITY)",
            format!(
                "dev identity treats every caller as one local user, so grantry refuses the \
                 non-loopback public URL {public_url}; use a loopback URL or oidc"
            ),
        ));
    }
    if !listen.ip().is_loopback() {
        return Err(bad(
            "--identity (GRANTRY_IDENTITY)",
            format!(
                "dev identity treats every caller as one local user, so grantry refuses to \
                 listen on the non-loopback address {listen}; listen on 127.0.0.1 or use oidc"
            ),
        ));
    }
    Ok(())
}
