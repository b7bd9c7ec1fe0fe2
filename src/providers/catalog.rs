//! The provider catalog: the built-in `demo` entry plus providers from a TOML file.
//!
//! A file entry whose id matches a built-in entry overrides just the fields it names (every
//! URL can be overridden: regional endpoints, self-hosted instances, tests); a new id adds a
//! generic OAuth 2.0 provider and must name every required field. Secrets are never inline:
//! an entry names the environment variable that holds its client secret.
//!
//! ```toml
//! default = "acme"            # the provider list_invoices uses
//! [providers.acme]
//! display_name = "Acme Billing"
//! authorize_url = "https://login.acme.example/oauth/authorize"
//! token_url = "https://login.acme.example/oauth/token"
//! api_base = "https://api.acme.example/v1"
//! issuer = "https://login.acme.example"    # checked against RFC 9207 `iss` when sent
//! client_id = "grantry"
//! client_secret_env = "ACME_CLIENT_SECRET"
//! scopes = ["invoices:read"]
//! pkce = "required"                        # required | supported | off
//! token_auth = "basic"                     # basic | post
//! adapter = "demo"                         # the invoice API shape it speaks
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use url::Url;

use crate::demo::{DEMO_CLIENT_ID, DEMO_CLIENT_SECRET};

/// How a provider takes PKCE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PkceMode {
    Required,
    Supported,
    Off,
}

/// How grantry authenticates at a provider's token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenAuth {
    /// HTTP Basic (`client_secret_basic`).
    Basic,
    /// Credentials in the form body (`client_secret_post`).
    Post,
}

/// The invoice API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdapterKind {
    Demo,
}

/// One provider, fully resolved.
#[derive(Clone)]
pub struct Provider {
    pub id: String,
    pub display_name: String,
    pub authorize_url: Url,
    pub token_url: Url,
    pub revoke_url: Option<Url>,
    pub api_base: Url,
    /// The authorization server's issuer, compared byte for byte with RFC 9207 `iss`.
    pub issuer: Option<String>,
    /// Whether the provider always sends `iss` on its redirect (then a missing one is refused).
    pub iss_parameter_supported: bool,
    pub client_id: String,
    pub client_secret: Option<String>,
    pub scopes: Vec<String>,
    pub pkce: PkceMode,
    pub token_auth: TokenAuth,
    pub adapter: AdapterKind,
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Provider")
            .field("id", &self.id)
            .field("authorize_url", &self.authorize_url.as_str())
            .field("token_url", &self.token_url.as_str())
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .finish_non_exhaustive()
    }
}

/// A catalog entry as written in TOML: every field optional so an entry can override a part.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryFile {
    display_name: Option<String>,
    authorize_url: Option<String>,
    token_url: Option<String>,
    revoke_url: Option<String>,
    api_base: Option<String>,
    issuer: Option<String>,
    iss_parameter_supported: Option<bool>,
    client_id: Option<String>,
    client_secret_env: Option<String>,
    scopes: Option<Vec<String>>,
    pkce: Option<PkceMode>,
    token_auth: Option<TokenAuth>,
    adapter: Option<AdapterKind>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    default: Option<String>,
    #[serde(default)]
    providers: BTreeMap<String, EntryFile>,
}

/// A catalog that cannot be used; the message names the file, entry and field.
#[derive(Debug, thiserror::Error)]
#[error("provider catalog: {0}")]
pub struct CatalogError(pub String);

/// The providers grantry can connect, and which one `list_invoices` uses.
#[derive(Debug, Clone)]
pub struct Catalog {
    providers: BTreeMap<String, Provider>,
    default: String,
}

impl Catalog {
    /// Builds the catalog: the demo entry (when `demo_base` is given, e.g.
    /// `http://127.0.0.1:8080/demo`) and the entries of `file`.
    pub fn load(demo_base: Option<&str>, file: Option<&Path>) -> Result<Self, CatalogError> {
        let parsed = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| CatalogError(format!("cannot read {}: {e}", path.display())))?;
                toml::from_str::<CatalogFile>(&text)
                    .map_err(|e| CatalogError(format!("{}: {e}", path.display())))?
            }
            None => CatalogFile::default(),
        };
        Self::build(demo_base, parsed, |name| std::env::var(name).ok())
    }

    fn build(
        demo_base: Option<&str>,
        file: CatalogFile,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, CatalogError> {
        let mut providers = BTreeMap::new();
        if let Some(base) = demo_base {
            providers.insert("demo".to_owned(), demo_entry(base)?);
        }
        for (id, entry) in file.providers {
            if !valid_id(&id) {
                return Err(CatalogError(format!(
                    "providers.{id}: an id is 1-32 characters of a-z, 0-9, - and _"
                )));
            }
            let resolved = merge(&id, providers.remove(&id), entry, &env)?;
            providers.insert(id, resolved);
        }
        let default = match file.default {
            Some(id) if providers.contains_key(&id) => id,
            Some(id) => {
                return Err(CatalogError(format!(
                    "default = \"{id}\" names no provider in the catalog"
                )));
            }
            None if providers.contains_key("demo") => "demo".to_owned(),
            None if providers.len() == 1 => providers.keys().next().cloned().unwrap_or_default(),
            None if providers.is_empty() => {
                return Err(CatalogError(
                    "no providers: enable the demo provider or add one with --providers".into(),
                ));
            }
            None => {
                return Err(CatalogError(
                    "several providers and no `default = \"id\"` naming the one list_invoices uses"
                        .into(),
                ));
            }
        };
        Ok(Self { providers, default })
    }

    pub fn get(&self, id: &str) -> Option<&Provider> {
        self.providers.get(id)
    }

    /// The provider `list_invoices` uses.
    pub fn default_provider(&self) -> &Provider {
        &self.providers[&self.default]
    }
}

fn valid_id(id: &str) -> bool {
    (1..=32).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn demo_entry(base: &str) -> Result<Provider, CatalogError> {
    let url = |path: &str| parse_url("demo", "built-in URL", &format!("{base}{path}"));
    Ok(Provider {
        id: "demo".into(),
        display_name: "Demo Billing".into(),
        authorize_url: url("/authorize")?,
        token_url: url("/token")?,
        revoke_url: Some(url("/revoke")?),
        api_base: url("/api")?,
        issuer: Some(base.to_owned()),
        iss_parameter_supported: true,
        client_id: DEMO_CLIENT_ID.into(),
        client_secret: Some(DEMO_CLIENT_SECRET.into()),
        scopes: vec!["invoices:read".into()],
        pkce: PkceMode::Required,
        token_auth: TokenAuth::Basic,
        adapter: AdapterKind::Demo,
    })
}

fn parse_url(id: &str, field: &str, text: &str) -> Result<Url, CatalogError> {
    let url = Url::parse(text)
        .map_err(|e| CatalogError(format!("providers.{id}.{field}: `{text}`: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(CatalogError(format!(
            "providers.{id}.{field}: must be an http or https URL"
        )));
    }
    Ok(url)
}

fn merge(
    id: &str,
    base: Option<Provider>,
    entry: EntryFile,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Provider, CatalogError> {
    let need = |field: &str| CatalogError(format!("providers.{id}.{field} is required"));
    let url_field = |field: &str, value: Option<String>, old: Option<Url>| match value {
        Some(text) => parse_url(id, field, &text).map(Some),
        None => Ok(old),
    };
    let client_secret = match entry.client_secret_env {
        Some(var) => Some(env(&var).ok_or_else(|| {
            CatalogError(format!(
                "providers.{id}.client_secret_env: the environment variable {var} is not set"
            ))
        })?),
        None => base.as_ref().and_then(|b| b.client_secret.clone()),
    };
    let authorize_url = url_field(
        "authorize_url",
        entry.authorize_url,
        base.as_ref().map(|b| b.authorize_url.clone()),
    )?
    .ok_or_else(|| need("authorize_url"))?;
    let token_url = url_field(
        "token_url",
        entry.token_url,
        base.as_ref().map(|b| b.token_url.clone()),
    )?
    .ok_or_else(|| need("token_url"))?;
    let revoke_url = url_field(
        "revoke_url",
        entry.revoke_url,
        base.as_ref().and_then(|b| b.revoke_url.clone()),
    )?;
    let api_base = url_field(
        "api_base",
        entry.api_base,
        base.as_ref().map(|b| b.api_base.clone()),
    )?
    .ok_or_else(|| need("api_base"))?;
    let issuer = entry
        .issuer
        .or_else(|| base.as_ref().and_then(|b| b.issuer.clone()));
    let iss_parameter_supported = entry
        .iss_parameter_supported
        .or_else(|| base.as_ref().map(|b| b.iss_parameter_supported))
        .unwrap_or(false);
    if iss_parameter_supported && issuer.is_none() {
        return Err(CatalogError(format!(
            "providers.{id}.issuer is required when iss_parameter_supported is true"
        )));
    }
    Ok(Provider {
        id: id.to_owned(),
        display_name: entry
            .display_name
            .or_else(|| base.as_ref().map(|b| b.display_name.clone()))
            .unwrap_or_else(|| id.to_owned()),
        authorize_url,
        token_url,
        revoke_url,
        api_base,
        issuer,
        iss_parameter_supported,
        client_id: entry
            .client_id
            .or_else(|| base.as_ref().map(|b| b.client_id.clone()))
            .ok_or_else(|| need("client_id"))?,
        client_secret,
        scopes: entry
            .scopes
            .or_else(|| base.as_ref().map(|b| b.scopes.clone()))
            .unwrap_or_default(),
        pkce: entry
            .pkce
            .or_else(|| base.as_ref().map(|b| b.pkce))
            .unwrap_or(PkceMode::Required),
        token_auth: entry
            .token_auth
            .or_else(|| base.as_ref().map(|b| b.token_auth))
            .unwrap_or(TokenAuth::Basic),
        adapter: entry
            .adapter
            .or_else(|| base.as_ref().map(|b| b.adapter))
            .ok_or_else(|| need("adapter"))?,
    })
}

#[cfg(test)]
mod tests;
