//! A catalog entry as written in TOML, how one overlays another, and how a merged entry
//! becomes a [`Provider`] (naming the first missing or bad field).

use std::collections::BTreeMap;

use serde::Deserialize;
use url::Url;

use super::{
    AdapterKind, ApiBase, CatalogError, CredentialKind, KeyField, KeyForm, OAuthClient, PkceMode,
    Provider, RevokeBody, SignIn, SiteTemplate, TokenAuth,
};
use crate::demo::{DEMO_CLIENT_ID, DEMO_CLIENT_SECRET};
use crate::providers::ProviderId;

/// A catalog entry as written in TOML: every field optional so an entry can override a part.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EntryFile {
    display_name: Option<String>,
    authorize_url: Option<String>,
    token_url: Option<String>,
    revoke_url: Option<String>,
    revoke_body: Option<RevokeBody>,
    api_base: Option<String>,
    issuer: Option<String>,
    iss_parameter_supported: Option<bool>,
    pub(super) client_id: Option<String>,
    client_secret_env: Option<String>,
    scopes: Option<Vec<String>>,
    /// Asked for besides `scopes` so the connection can read; with `write_scopes`, a sign-in
    /// asks only for what the calling tool needs and a write asks for more later.
    read_scopes: Option<Vec<String>>,
    /// Asked for besides `scopes` and `read_scopes` so the connection can write.
    write_scopes: Option<Vec<String>>,
    scope_separator: Option<String>,
    pkce: Option<PkceMode>,
    token_auth: Option<TokenAuth>,
    extra_authorize_params: Option<BTreeMap<String, String>>,
    default_token_lifetime_secs: Option<i64>,
    refresh_rotates: Option<bool>,
    refresh_grace_secs: Option<i64>,
    /// How long a refresh token lasts unused (the keep-alive refreshes before it closes).
    refresh_idle_secs: Option<i64>,
    /// How long a refresh token lasts from the sign-in whatever happens.
    refresh_max_secs: Option<i64>,
    adapter: Option<AdapterKind>,
    /// Where the authorization server's metadata is (RFC 8414); by default derived from
    /// `issuer`. Read at start for an entry with `pkce = "off"`.
    metadata_url: Option<String>,
    /// `api_key`: a person connects by typing a key on the connect page (no OAuth fields).
    pub(super) credential: Option<CredentialKind>,
    /// What the key form asks for besides the key (`["site"]`).
    key_fields: Option<Vec<KeyField>>,
    /// Where a person creates a key, linked from the key form.
    key_help_url: Option<String>,
    /// Only the built-in demo entry has an inline secret; files name a variable.
    #[serde(skip)]
    client_secret: Option<String>,
}

impl EntryFile {
    /// This entry with every field `over` sets replaced; extra authorize parameters are
    /// added to the ones already there (overriding one must not drop Zoho's
    /// `access_type=offline`).
    pub(super) fn overlay(self, over: EntryFile) -> EntryFile {
        let params = match (&self.extra_authorize_params, &over.extra_authorize_params) {
            (Some(base), Some(more)) => {
                let mut merged = base.clone();
                merged.extend(more.clone());
                Some(merged)
            }
            (base, more) => more.clone().or_else(|| base.clone()),
        };
        macro_rules! pick {
            ($($field:ident),*) => {
                EntryFile { $($field: over.$field.or(self.$field),)* }
            };
        }
        pick!(
            display_name,
            authorize_url,
            token_url,
            revoke_url,
            revoke_body,
            api_base,
            issuer,
            iss_parameter_supported,
            client_id,
            client_secret_env,
            scopes,
            read_scopes,
            write_scopes,
            scope_separator,
            pkce,
            token_auth,
            extra_authorize_params,
            default_token_lifetime_secs,
            refresh_rotates,
            refresh_grace_secs,
            refresh_idle_secs,
            refresh_max_secs,
            adapter,
            metadata_url,
            credential,
            key_fields,
            key_help_url,
            client_secret
        )
        .with_params(params)
    }

    fn with_params(mut self, params: Option<BTreeMap<String, String>>) -> Self {
        self.extra_authorize_params = params;
        self
    }
}

pub(super) fn demo_entry(base: &str) -> EntryFile {
    let url = |path: &str| Some(format!("{base}{path}"));
    EntryFile {
        display_name: Some("Demo Billing".into()),
        authorize_url: url("/authorize"),
        token_url: url("/token"),
        revoke_url: url("/revoke"),
        api_base: url("/api"),
        issuer: Some(base.to_owned()),
        iss_parameter_supported: Some(true),
        client_id: Some(DEMO_CLIENT_ID.into()),
        client_secret: Some(DEMO_CLIENT_SECRET.into()),
        scopes: Some(Vec::new()),
        read_scopes: Some(vec!["invoices:read".into()]),
        write_scopes: Some(vec!["invoices:write".into()]),
        pkce: Some(PkceMode::Required),
        token_auth: Some(TokenAuth::Basic),
        adapter: Some(AdapterKind::Demo),
        ..Default::default()
    }
}

fn parse_url(
    id: &str,
    field: &str,
    text: &str,
    insecure_allowed: bool,
) -> Result<Url, CatalogError> {
    let url = Url::parse(text)
        .map_err(|e| CatalogError(format!("providers.{id}.{field}: `{text}`: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(CatalogError(format!(
            "providers.{id}.{field}: must be an http or https URL"
        )));
    }
    if url.scheme() == "http" && !grantry_base::net::is_loopback(&url) && !insecure_allowed {
        return Err(CatalogError(format!(
            "providers.{id}.{field}: `{text}` is plain http to a host that is not loopback: the \
             client secret, codes and tokens would cross the network in cleartext. Use https \
             (or, for a test setup only, --allow-insecure-provider {id})"
        )));
    }
    Ok(url)
}

/// Parses an entry's URLs, naming the field of a bad one.
struct Urls<'a> {
    id: &'a ProviderId,
    /// Plain http to a host that is not loopback is accepted (tests only).
    insecure_allowed: bool,
}

impl Urls<'_> {
    fn required(&self, field: &str, value: Option<String>) -> Result<Url, CatalogError> {
        let text = value.ok_or_else(|| need(self.id, field))?;
        parse_url(self.id, field, &text, self.insecure_allowed)
    }

    fn optional(&self, field: &str, value: Option<String>) -> Result<Option<Url>, CatalogError> {
        value
            .map(|text| parse_url(self.id, field, &text, self.insecure_allowed))
            .transpose()
    }
}

fn need(id: &ProviderId, field: &str) -> CatalogError {
    CatalogError(format!("providers.{id}.{field} is required"))
}

/// Turns a merged entry into a provider, naming the first missing or bad field.
/// `insecure_allowed`: plain http to a host that is not loopback is accepted (tests only).
pub(super) fn resolve(
    id: &ProviderId,
    entry: EntryFile,
    env: &impl Fn(&str) -> Option<String>,
    insecure_allowed: bool,
) -> Result<Provider, CatalogError> {
    let urls = Urls {
        id,
        insecure_allowed,
    };
    let sign_in = match entry.credential.unwrap_or_default() {
        CredentialKind::Oauth => SignIn::OAuth(Box::new(oauth_client(id, &entry, env, &urls)?)),
        CredentialKind::ApiKey => SignIn::ApiKey(KeyForm {
            fields: entry.key_fields.clone().unwrap_or_default(),
            help_url: urls.optional("key_help_url", entry.key_help_url.clone())?,
        }),
    };
    let provider = Provider {
        id: id.clone(),
        display_name: entry.display_name.unwrap_or_else(|| id.to_string()),
        api_base: api_base(id, entry.api_base, &urls)?,
        scopes: entry.scopes.unwrap_or_default(),
        read_scopes: entry.read_scopes.unwrap_or_default(),
        write_scopes: entry.write_scopes.unwrap_or_default(),
        adapter: entry.adapter.ok_or_else(|| need(id, "adapter"))?,
        sign_in,
    };
    check_sign_in(&provider)?;
    Ok(provider)
}

/// What an entry's sign-in needs of the rest: an `api_base` with `{site}` exactly when the
/// key form asks for a site; for an API key, an adapter that can check one, and no scopes (a
/// key can do what its owner made it for, nothing to ask for more of).
fn check_sign_in(provider: &Provider) -> Result<(), CatalogError> {
    let id = &provider.id;
    let form = provider.key_form();
    let asks_site = form.is_some_and(KeyForm::asks_site);
    if matches!(provider.api_base, ApiBase::PerSite(_)) != asks_site {
        return Err(CatalogError(format!(
            "providers.{id}: an api_base with {{site}} goes with credential = \"api_key\" and \
             key_fields = [\"site\"], and only with them"
        )));
    }
    if form.is_none() {
        return Ok(());
    }
    if !provider.adapter.checks_keys() {
        return Err(CatalogError(format!(
            "providers.{id}.adapter: {:?} cannot check an API key; credential = \"api_key\" \
             takes an adapter that can (paddle, chargebee)",
            provider.adapter
        )));
    }
    let scoped = [
        &provider.scopes,
        &provider.read_scopes,
        &provider.write_scopes,
    ];
    if scoped.iter().any(|list| !list.is_empty()) {
        return Err(CatalogError(format!(
            "providers.{id}: an API key has no scopes; drop scopes, read_scopes and write_scopes"
        )));
    }
    Ok(())
}

/// The entry's `api_base`: one URL, or (holding `{site}`) a template for one per site.
fn api_base(
    id: &ProviderId,
    text: Option<String>,
    urls: &Urls<'_>,
) -> Result<ApiBase, CatalogError> {
    let text = text.ok_or_else(|| need(id, "api_base"))?;
    if !text.contains("{site}") {
        return urls.required("api_base", Some(text)).map(ApiBase::Fixed);
    }
    let check = |url: &str| {
        urls.required("api_base", Some(url.to_owned()))
            .map_err(|e| e.0)
    };
    SiteTemplate::parse(&text, check)
        .map(ApiBase::PerSite)
        .map_err(|e| CatalogError(format!("providers.{id}.api_base: {e}")))
}

/// The OAuth half of an entry, naming the first missing or bad field.
fn oauth_client(
    id: &ProviderId,
    entry: &EntryFile,
    env: &impl Fn(&str) -> Option<String>,
    urls: &Urls<'_>,
) -> Result<OAuthClient, CatalogError> {
    let entry = entry.clone();
    let client_secret = client_secret(id, entry.client_secret_env, entry.client_secret, env)?;
    let iss_parameter_supported = entry.iss_parameter_supported.unwrap_or(false);
    if iss_parameter_supported && entry.issuer.is_none() {
        return Err(CatalogError(format!(
            "providers.{id}.issuer is required when iss_parameter_supported is true"
        )));
    }
    let lifetime = entry.default_token_lifetime_secs.unwrap_or(3600);
    if !(60..=365 * 24 * 3600).contains(&lifetime) {
        return Err(CatalogError(format!(
            "providers.{id}.default_token_lifetime_secs: between 60 and a year"
        )));
    }
    Ok(OAuthClient {
        authorize_url: urls.required("authorize_url", entry.authorize_url)?,
        token_url: urls.required("token_url", entry.token_url)?,
        revoke_url: urls.optional("revoke_url", entry.revoke_url)?,
        metadata_url: urls.optional("metadata_url", entry.metadata_url)?,
        revoke_body: entry.revoke_body.unwrap_or_default(),
        issuer: entry.issuer,
        iss_parameter_supported,
        client_id: entry.client_id.ok_or_else(|| need(id, "client_id"))?,
        client_secret: Some(client_secret),
        scope_separator: entry.scope_separator.unwrap_or_else(|| " ".into()),
        pkce: entry.pkce.unwrap_or(PkceMode::Required),
        token_auth: entry.token_auth.unwrap_or(TokenAuth::Basic),
        extra_authorize_params: entry.extra_authorize_params.unwrap_or_default(),
        default_token_lifetime_secs: lifetime,
        refresh_rotates: entry.refresh_rotates.unwrap_or(true),
        refresh_grace_secs: entry.refresh_grace_secs.unwrap_or(0).max(0),
        refresh_idle_secs: positive(id, "refresh_idle_secs", entry.refresh_idle_secs)?,
        refresh_max_secs: positive(id, "refresh_max_secs", entry.refresh_max_secs)?,
    })
}

/// A lifetime in seconds, if given: more than zero.
fn positive(id: &ProviderId, field: &str, value: Option<i64>) -> Result<Option<i64>, CatalogError> {
    match value {
        Some(secs) if secs <= 0 => Err(CatalogError(format!(
            "providers.{id}.{field} must be a positive number of seconds"
        ))),
        other => Ok(other),
    }
}

/// The client secret, from the environment variable the entry names or the entry itself:
/// grantry is a confidential client everywhere, so every token request authenticates.
fn client_secret(
    id: &ProviderId,
    variable: Option<String>,
    written: Option<String>,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<String, CatalogError> {
    match variable {
        Some(var) => env(&var).ok_or_else(|| {
            CatalogError(format!(
                "providers.{id}.client_secret_env: the environment variable {var} is not set"
            ))
        }),
        None => written
            .ok_or_else(|| CatalogError(format!("providers.{id}.client_secret_env is required"))),
    }
}
