//! The provider catalog: the built-in `demo` entry plus providers from a TOML file.
//!
//! Built in: the demo entry and one entry per billing provider grantry has an adapter for
//! (`builtin.toml`), each offered once a file gives it a `client_id` (an API-key provider,
//! `credential = "api_key"`, once a file names it: `[providers.paddle]`). A file entry whose id
//! matches a built-in entry overrides just the fields it names (every URL can be overridden:
//! regional endpoints, sandboxes, tests); a new id adds a generic OAuth 2.0 provider and must
//! name every required field. Secrets are never inline: an entry names the environment
//! variable that holds its client secret.
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
//! scopes = ["offline_access"]              # asked at every sign-in
//! read_scopes = ["invoices:read"]           # and for reading (list_invoices)
//! write_scopes = ["invoices:write"]         # asked for later, when a tool writes
//! pkce = "required"                        # required | supported | off
//! token_auth = "basic"                     # basic | post
//! adapter = "demo"                         # the invoice API shape it speaks
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

mod access;
mod entry;
mod pkce;
pub(crate) mod sign_in;

pub(crate) use access::add_missing;
use entry::{EntryFile, demo_entry, resolve};
use sign_in::CredentialKind;
pub(crate) use sign_in::SignIn;
pub(crate) use sign_in::{ApiBase, KeyField, KeyForm, OAuthClient, SiteName, SiteTemplate};

use super::ProviderId;

/// How a provider takes PKCE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PkceMode {
    Required,
    Supported,
    Off,
}

/// How grantry authenticates at a provider's token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TokenAuth {
    /// HTTP Basic (`client_secret_basic`).
    Basic,
    /// Credentials in the form body (`client_secret_post`).
    Post,
    /// HTTP Basic with the client secret (an API secret key) as the user name: Stripe.
    SecretKey,
}

/// How a revocation request carries the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum RevokeBody {
    /// RFC 7009: a form body.
    #[default]
    Form,
    /// A JSON body `{"token": …}` (Intuit).
    Json,
    /// The token as a query parameter (Zoho).
    Query,
}

/// The invoice API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AdapterKind {
    Demo,
    Stripe,
    Xero,
    Quickbooks,
    Freshbooks,
    Zoho,
    Sage,
    Paddle,
    Chargebee,
}

impl AdapterKind {
    /// Whether a grant is used with one of several accounts (a tenant, a company) that the
    /// person picks at sign-in (the demo: the user named at its consent page), so one person
    /// may connect several.
    pub(crate) fn has_accounts(self) -> bool {
        !matches!(self, AdapterKind::Stripe | AdapterKind::Paddle)
    }

    /// Whether it can check an API key a person typed (`credential = "api_key"` needs it).
    pub(crate) fn checks_keys(self) -> bool {
        matches!(self, AdapterKind::Paddle | AdapterKind::Chargebee)
    }
}

/// One provider, fully resolved.
#[derive(Debug, Clone)]
pub struct Provider {
    pub(crate) id: ProviderId,
    pub(crate) display_name: String,
    pub(crate) api_base: ApiBase,
    /// Asked for at every sign-in (`offline_access`, say); with no per-access lists, all
    /// there is. None for an API key: it can do whatever its owner made it for.
    pub(crate) scopes: Vec<String>,
    /// Asked for besides `scopes` so the connection can read (see [`Provider::scopes_for`]).
    pub(crate) read_scopes: Vec<String>,
    /// Asked for besides those so it can write; none: the entry does not ask per access.
    pub(crate) write_scopes: Vec<String>,
    pub(crate) adapter: AdapterKind,
    /// How a person connects it: OAuth at the provider, or a key typed on grantry's page.
    pub sign_in: SignIn,
}

impl Provider {
    /// Its OAuth client, unless a person connects it with an API key.
    pub(crate) fn oauth(&self) -> Option<&OAuthClient> {
        match &self.sign_in {
            SignIn::OAuth(client) => Some(client),
            SignIn::ApiKey(_) => None,
        }
    }

    /// Its key form, if a person connects it with an API key.
    pub(crate) fn key_form(&self) -> Option<&KeyForm> {
        match &self.sign_in {
            SignIn::ApiKey(form) => Some(form),
            SignIn::OAuth(_) => None,
        }
    }

    /// How long a refresh token lasts unused, if the provider issues ones that die so.
    pub(crate) fn refresh_idle_secs(&self) -> Option<i64> {
        self.oauth().and_then(|client| client.refresh_idle_secs)
    }

    /// How long a refresh token lasts from the sign-in, if the provider bounds it.
    pub(crate) fn refresh_max_secs(&self) -> Option<i64> {
        self.oauth().and_then(|client| client.refresh_max_secs)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    default: Option<String>,
    #[serde(default)]
    providers: BTreeMap<ProviderId, EntryFile>,
}

/// The built-in entries: every billing provider grantry has an adapter for.
const BUILTIN: &str = include_str!("builtin.toml");

/// A catalog that cannot be used; the message names the file, entry and field.
#[derive(Debug, thiserror::Error)]
#[error("provider catalog: {0}")]
pub struct CatalogError(pub String);

/// The providers grantry can connect, and which one `list_invoices` uses.
#[derive(Debug, Clone)]
pub struct Catalog {
    providers: BTreeMap<ProviderId, Provider>,
    default: ProviderId,
}

impl Catalog {
    /// Builds the catalog: the demo entry (when `demo_base` is given, e.g.
    /// `http://127.0.0.1:8080/demo`), the built-in entries and the entries of `file`. Only
    /// entries with a `client_id` are offered. A URL in plain http to a host that is not
    /// loopback is refused unless the entry's id is in `allow_insecure`.
    pub(crate) fn load(
        demo_base: Option<&str>,
        file: Option<&Path>,
        allow_insecure: &[ProviderId],
    ) -> Result<Self, CatalogError> {
        let parsed = match file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| CatalogError(format!("cannot read {}: {e}", path.display())))?;
                toml::from_str::<CatalogFile>(&text)
                    .map_err(|e| CatalogError(format!("{}: {e}", path.display())))?
            }
            None => CatalogFile::default(),
        };
        Self::build(
            demo_base,
            parsed,
            |name| std::env::var(name).ok(),
            allow_insecure,
        )
    }

    fn build(
        demo_base: Option<&str>,
        file: CatalogFile,
        env: impl Fn(&str) -> Option<String>,
        allow_insecure: &[ProviderId],
    ) -> Result<Self, CatalogError> {
        let builtin: CatalogFile =
            toml::from_str(BUILTIN).expect("the built-in catalog is valid TOML");
        let mut entries = builtin.providers;
        let templates: Vec<ProviderId> = entries.keys().cloned().collect();
        if let Some(base) = demo_base {
            entries.insert(demo_id(), demo_entry(base));
        }
        let named: Vec<ProviderId> = file.providers.keys().cloned().collect();
        for (id, entry) in file.providers {
            let takes_key = entry.credential == Some(CredentialKind::ApiKey);
            if !templates.contains(&id) && id != "demo" && !takes_key && entry.client_id.is_none() {
                return Err(CatalogError(format!(
                    "providers.{id}.client_id is required"
                )));
            }
            let merged = entries.remove(&id).unwrap_or_default().overlay(entry);
            entries.insert(id, merged);
        }
        let mut providers = BTreeMap::new();
        for (id, entry) in entries {
            // A built-in entry is offered once configured: an OAuth one when someone
            // registered a client for it, an API-key one when the file names it.
            let offered = match entry.credential.unwrap_or_default() {
                CredentialKind::Oauth => entry.client_id.is_some(),
                CredentialKind::ApiKey => named.contains(&id),
            };
            if offered {
                let insecure = allow_insecure.contains(&id);
                providers.insert(id.clone(), resolve(&id, entry, &env, insecure)?);
            }
        }
        if let Some(unknown) = allow_insecure
            .iter()
            .find(|id| !providers.contains_key(*id))
        {
            return Err(CatalogError(format!(
                "--allow-insecure-provider: `{unknown}` names no provider in the catalog"
            )));
        }
        let default = choose_default(file.default, &providers)?;
        Ok(Self { providers, default })
    }

    /// The built-in demo provider's entry at `demo_base`, for tools that write grants
    /// outside a server (benchmarks, tests).
    pub fn demo_entry(demo_base: &str) -> Result<Provider, CatalogError> {
        Self::load(Some(demo_base), None, &[])?
            .get("demo")
            .cloned()
            .ok_or_else(|| CatalogError("the catalog has no demo entry".into()))
    }

    pub(crate) fn get(&self, id: &str) -> Option<&Provider> {
        self.providers.get(id)
    }

    /// The provider offered to a caller who has connected none and named none.
    pub(crate) fn default_provider(&self) -> &Provider {
        &self.providers[&self.default]
    }

    /// Every offered provider, by id.
    pub(crate) fn all(&self) -> impl Iterator<Item = &Provider> {
        self.providers.values()
    }
}

/// The provider the file names as `default`, else the demo, else the only one.
fn choose_default(
    named: Option<String>,
    providers: &BTreeMap<ProviderId, Provider>,
) -> Result<ProviderId, CatalogError> {
    if let Some(id) = named {
        return match providers.get_key_value(id.as_str()) {
            Some((offered, _)) => Ok(offered.clone()),
            None => Err(CatalogError(format!(
                "default = \"{id}\" names no provider in the catalog (is its client_id set?)"
            ))),
        };
    }
    if providers.contains_key("demo") {
        return Ok(demo_id());
    }
    let mut ids = providers.keys();
    match (ids.next(), ids.next()) {
        (Some(only), None) => Ok(only.clone()),
        (None, _) => Err(CatalogError(
            "no providers: turn the demo provider on with --demo true (GRANTRY_DEMO=true; it is \
             off under --identity oidc), or give a provider a client_id in the --providers file"
                .into(),
        )),
        (Some(_), Some(_)) => Err(CatalogError(
            "several providers and no `default = \"id\"` naming the one offered first".into(),
        )),
    }
}

fn demo_id() -> ProviderId {
    "demo".parse().expect("`demo` is an id")
}

#[cfg(test)]
mod tests;
