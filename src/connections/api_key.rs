//! Connecting with an API key a person typed on grantry's connect page: one cheap call to the
//! provider checks it, then it is stored sealed as the grant's access token like any token.
//! A key is never refreshed and never expires here; a provider refusing it later marks the
//! connection for a new key. Disconnecting forgets it (the provider has nothing to revoke).

use super::Connections;
use crate::identity::Principal;
use crate::providers::invoice::ApiError;
use crate::providers::oauth::{ProviderToken, TokenSet};
use crate::providers::{Account, Provider, adapters};
use crate::store::StoreError;

/// 9999-12-31T23:59:59Z: a key's "expiry", so the token keeper never refreshes it.
const KEY_NEVER_EXPIRES: i64 = 253_402_300_799;

/// A key as typed: visible ASCII, 8 to 512 characters. Never printed.
pub(crate) struct ApiKey(ProviderToken);

impl ApiKey {
    /// The key in `typed` (surrounding blanks dropped), if it can be one.
    pub(crate) fn parse(typed: &str) -> Option<Self> {
        let key = typed.trim();
        let visible = key.bytes().all(|b| b.is_ascii_graphic());
        ((8..=512).contains(&key.len()) && visible).then(|| Self(key.into()))
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey([REDACTED])")
    }
}

/// Why a key was not stored.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyError {
    /// The provider refused it, or it cannot read invoices.
    #[error("the provider refused the key")]
    Refused,
    /// The provider could not be asked; nothing is known about the key.
    #[error("the key could not be checked: {0}")]
    Unchecked(ApiError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Connections {
    /// Checks `key` at `provider` (for `account`, where the provider has several) and stores
    /// it as the principal's grant there: a new connection, or the same one with a new key.
    pub(crate) async fn connect_with_key(
        &self,
        principal: &Principal,
        provider: &Provider,
        key: ApiKey,
        account: Option<Account>,
        now: i64,
    ) -> Result<(), KeyError> {
        let api = self.api(provider, &key.0, account.as_ref());
        match adapters::check_key(&api).await {
            Ok(()) => {}
            // A 404 is a site that does not exist (Chargebee): the key cannot serve either.
            Err(ApiError::Unauthorized | ApiError::Forbidden | ApiError::NotFound) => {
                return Err(KeyError::Refused);
            }
            Err(e) => return Err(KeyError::Unchecked(e)),
        }
        let tokens = TokenSet {
            access_token: key.0,
            refresh_token: None,
            expires_at: KEY_NEVER_EXPIRES,
            scopes: Vec::new(),
            account,
            previous_refresh_token: None,
            rotated_at: None,
        };
        Ok(self
            .store_signed_in(principal, provider, &tokens, now)
            .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_visible_ascii_of_bounded_length_and_never_printed() {
        let key = ApiKey::parse("  pdl_sdbx_apikey_01abc  ").unwrap();
        assert_eq!(key.0.expose(), "pdl_sdbx_apikey_01abc");
        assert!(!format!("{key:?}").contains("pdl_"));
        assert!(ApiKey::parse("short").is_none());
        assert!(ApiKey::parse("has a space inside").is_none());
        assert!(ApiKey::parse(&"k".repeat(513)).is_none());
        assert!(ApiKey::parse("ключ-ключ-ключ").is_none());
    }
}
