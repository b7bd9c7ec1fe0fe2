//! How a person connects a provider: the OAuth 2.0 code flow at the provider, or a secret
//! API key typed on grantry's own connect page (never in the chat: URL mode exists for it).

use std::collections::BTreeMap;

use serde::Deserialize;
use url::Url;

use super::{PkceMode, RevokeBody, TokenAuth};

/// Which sign-in an entry uses (`credential` in the catalog; `oauth` unless it says).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum CredentialKind {
    #[default]
    Oauth,
    ApiKey,
}

/// A provider's sign-in, resolved.
#[derive(Debug, Clone)]
pub enum SignIn {
    OAuth(Box<OAuthClient>),
    ApiKey(KeyForm),
}

/// What grantry needs to run the OAuth 2.0 code flow with a provider and keep its tokens.
#[derive(Clone)]
pub struct OAuthClient {
    pub(crate) authorize_url: Url,
    pub(crate) token_url: Url,
    pub(crate) revoke_url: Option<Url>,
    pub(crate) revoke_body: RevokeBody,
    /// The authorization server's issuer, compared byte for byte with RFC 9207 `iss`.
    pub(crate) issuer: Option<String>,
    /// Where its RFC 8414 metadata is, when the entry says; otherwise derived from `issuer`.
    pub(crate) metadata_url: Option<Url>,
    /// Whether the provider always sends `iss` on its redirect (then a missing one is refused).
    pub(crate) iss_parameter_supported: bool,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    /// How the authorize URL joins scopes (a space, or Zoho's comma).
    pub(crate) scope_separator: String,
    pub(crate) pkce: PkceMode,
    pub(crate) token_auth: TokenAuth,
    /// Added to the authorize URL as they are (Zoho's `access_type=offline`, say).
    pub(crate) extra_authorize_params: BTreeMap<String, String>,
    /// Access-token lifetime assumed when the token response has no `expires_in`.
    pub(crate) default_token_lifetime_secs: i64,
    /// Whether a refresh may return a new refresh token that replaces the old one.
    pub(crate) refresh_rotates: bool,
    /// How long the previous refresh token still works after a rotation.
    pub(crate) refresh_grace_secs: i64,
    /// How long a refresh token lasts unused (Xero 60 days); the keep-alive refreshes before.
    pub refresh_idle_secs: Option<i64>,
    /// How long a refresh token lasts from the sign-in whatever happens (QuickBooks 5 years).
    pub(crate) refresh_max_secs: Option<i64>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
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

/// What the connect page asks for to connect with an API key.
#[derive(Debug, Clone, Default)]
pub struct KeyForm {
    /// Asked for besides the key.
    pub(crate) fields: Vec<KeyField>,
    /// Where the person creates a key, shown beside the form.
    pub(crate) help_url: Option<Url>,
}

impl KeyForm {
    /// Whether the form asks for the account's site name beside the key.
    pub(crate) fn asks_site(&self) -> bool {
        self.fields.contains(&KeyField::Site)
    }
}

/// A field the connect page asks for besides the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum KeyField {
    /// The account's site name (Chargebee's `{site}.chargebee.com`): the connection's account.
    Site,
}

/// Where a provider's API is: one base for everyone, or one per account, named by the site
/// the person typed (Chargebee's `https://{site}.chargebee.com/api/v2`).
#[derive(Debug, Clone)]
pub(crate) enum ApiBase {
    Fixed(Url),
    PerSite(SiteTemplate),
}

/// An API base URL with one `{site}` in it.
#[derive(Debug, Clone)]
pub(crate) struct SiteTemplate(String);

impl SiteTemplate {
    const MARK: &'static str = "{site}";

    /// `text` if it holds `{site}` once and, with a site put in, is a URL `check` accepts.
    pub(super) fn parse(
        text: &str,
        check: impl Fn(&str) -> Result<Url, String>,
    ) -> Result<Self, String> {
        if text.matches(Self::MARK).count() != 1 {
            return Err(format!(
                "`{text}` must name the site once, as {}",
                Self::MARK
            ));
        }
        check(&text.replace(Self::MARK, "example"))?;
        Ok(Self(text.to_owned()))
    }

    /// The API base of `site`.
    pub(crate) fn url_for(&self, site: &SiteName) -> Option<Url> {
        Url::parse(&self.0.replace(Self::MARK, &site.0)).ok()
    }
}

/// An account's site name as a per-site API's host takes it: one DNS label, lowercase
/// letters, digits and inner hyphens, 1 to 63 characters. Nothing else can be put into a
/// template, so a site cannot change which host is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SiteName(String);

impl SiteName {
    pub(crate) fn parse(text: &str) -> Option<Self> {
        let label = (1..=63).contains(&text.len())
            && text
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !text.starts_with('-')
            && !text.ends_with('-');
        label.then(|| Self(text.to_owned()))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}
