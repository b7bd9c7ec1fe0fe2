//! The identity settings: `dev` only on loopback, `oidc` with an issuer and a login client.

use std::net::SocketAddr;

use url::Url;

use secrecy::{ExposeSecret as _, SecretString};

use super::values::{ClaimMatch, CommaList, Scope};
use super::{ConfigError, IdentityMode, PublicUrl, ServeArgs, bad};
use crate::access::Access;

/// The OpenID Connect issuer grantry trusts, and the client it uses for browser logins.
#[derive(Clone, Debug)]
pub(crate) struct OidcSettings {
    /// The issuer exactly as its discovery document must spell it (no trailing slash added).
    pub(crate) issuer: String,
    pub(crate) client_id: String,
    pub(crate) client_secret: SecretString,
    /// Scopes every MCP access token must carry.
    pub(crate) required_scopes: Vec<String>,
    /// Claims that mark an access token as having no person behind it.
    pub(crate) non_interactive_claims: Vec<ClaimMatch>,
    /// The scopes a tool call needs beyond `required_scopes`, by what the tool does.
    pub(crate) tool_scopes: ToolScopes,
}

/// The scopes each kind of tool call needs beyond those every request needs
/// (`--oidc-read-scopes`, `--oidc-write-scopes`, `--oidc-manage-scopes`).
#[derive(Clone, Debug, Default)]
pub(crate) struct ToolScopes {
    pub(crate) read: Vec<String>,
    pub(crate) write: Vec<String>,
    pub(crate) manage: Vec<String>,
}

impl ToolScopes {
    /// What a call of a tool with this access needs.
    pub(crate) fn needed_for(&self, access: Access) -> &[String] {
        match access {
            Access::Read => &self.read,
            Access::Write => &self.write,
            Access::Manage => &self.manage,
        }
    }

    /// Every scope some tool needs.
    pub(crate) fn all(&self) -> impl Iterator<Item = &String> {
        self.read.iter().chain(&self.write).chain(&self.manage)
    }
}

/// The OpenID Connect settings when the identity is oidc, each checked.
pub(super) fn resolve(
    args: &ServeArgs,
    public_url: &PublicUrl,
) -> Result<Option<OidcSettings>, ConfigError> {
    if args.identity != IdentityMode::Oidc {
        return Ok(None);
    }
    if !is_https_or_loopback(public_url.as_url()) {
        return Err(bad(
            "--public-url (GRANTRY_PUBLIC_URL)",
            "oidc identity needs an https public URL (http only on a loopback address): \
             session cookies must be Secure",
        ));
    }
    Ok(Some(OidcSettings {
        issuer: issuer(args.oidc_issuer.as_deref())?,
        client_id: client_id(args.oidc_client_id.as_deref(), public_url)?,
        client_secret: client_secret(args.oidc_client_secret.as_ref())?,
        required_scopes: scopes(&args.oidc_scopes),
        tool_scopes: ToolScopes {
            read: scopes(&args.oidc_read_scopes),
            write: scopes(&args.oidc_write_scopes),
            manage: scopes(&args.oidc_manage_scopes),
        },
        non_interactive_claims: args
            .non_interactive_claim
            .as_ref()
            .map(|list| list.0.clone())
            .unwrap_or_default(),
    }))
}

fn scopes(list: &Option<CommaList<Scope>>) -> Vec<String> {
    list.iter()
        .flat_map(|list| list.0.iter().map(|scope| scope.0.clone()))
        .collect()
}

fn issuer(given: Option<&str>) -> Result<String, ConfigError> {
    let setting = "--oidc-issuer (GRANTRY_OIDC_ISSUER)";
    let issuer = given.ok_or_else(|| bad(setting, "oidc identity needs an issuer"))?;
    let url = Url::parse(issuer).map_err(|e| bad(setting, format!("`{issuer}`: {e}")))?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad(setting, "must not carry a query or a fragment"));
    }
    if !is_https_or_loopback(&url) {
        return Err(bad(
            setting,
            "must be https (http only on a loopback address, for local testing)",
        ));
    }
    Ok(issuer.to_owned())
}

fn client_id(given: Option<&str>, public_url: &PublicUrl) -> Result<String, ConfigError> {
    let setting = "--oidc-client-id (GRANTRY_OIDC_CLIENT_ID)";
    let client_id = given.filter(|s| !s.is_empty()).ok_or_else(|| {
        bad(
            setting,
            "oidc identity needs the client id grantry signs browsers in with",
        )
    })?;
    if format!("{public_url}/mcp") == client_id {
        return Err(bad(
            setting,
            "must not be grantry's MCP URL: ID tokens for the login client would then look \
             like access tokens for grantry",
        ));
    }
    Ok(client_id.to_owned())
}

fn client_secret(given: Option<&SecretString>) -> Result<SecretString, ConfigError> {
    given
        .filter(|s| !s.expose_secret().is_empty())
        .cloned()
        .ok_or_else(|| {
            bad(
                "GRANTRY_OIDC_CLIENT_SECRET",
                "oidc identity needs the login client's secret in this environment variable",
            )
        })
}

fn is_https_or_loopback(url: &Url) -> bool {
    url.scheme() == "https" || (url.scheme() == "http" && grantry_base::net::is_loopback(url))
}

/// `dev` treats every caller as one local user, so it must not be reachable from elsewhere.
pub(super) fn check_dev(
    identity: IdentityMode,
    listen: SocketAddr,
    public_url: &PublicUrl,
) -> Result<(), ConfigError> {
    if identity != IdentityMode::Dev {
        return Ok(());
    }
    let public_is_loopback = grantry_base::net::is_loopback(public_url.as_url());
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
