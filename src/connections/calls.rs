//! Calling a provider's API with a grant's token: the one loop every tool that calls a
//! provider goes through. A 401 gets one refresh and one more try; a 401 after that, or a 403
//! (a disconnected tenant, a withdrawn scope), marks the connection `needs_reauth`, so the
//! user is asked to connect again (unless the grant changed meanwhile: then the newer one is
//! tried).

use std::future::Future;

use super::tokens::{TokenAccess, TokenKeeper, Trigger};
use crate::grants::{Grant, GrantKey, ReauthReason};
use crate::identity::McpClient;
use crate::providers::invoice::ApiError;
use crate::providers::oauth::ProviderToken;
use crate::providers::{Account, Provider};
use crate::store::StoreError;

/// What a call with a grant's token came to.
#[derive(Debug)]
pub(crate) enum Called<T> {
    /// The API answered.
    Done(T),
    /// No usable grant (none, dead, or access withdrawn, and why): the user must connect.
    SignInNeeded(Option<ReauthReason>),
    /// The provider could not be refreshed with or answered now; try again later (after so
    /// many seconds, when it said).
    Unavailable(Option<u64>),
    /// The API refused or failed in another way.
    Failed(ApiError),
}

/// Tries with a token: a fresh one after a refused one, and once more after a grant that
/// changed meanwhile; more than that means the provider keeps refusing fresh tokens.
const ATTEMPTS: usize = 3;

impl TokenKeeper {
    /// Calls `api` with the token (and account) of the grant `key`, as the module says, for a
    /// call through `client`. `read`: the grant as the caller just read it (`Some(None)`:
    /// none stored), for the first try, which then reads nothing.
    pub(crate) async fn call<T, F, Fut>(
        &self,
        provider: &Provider,
        key: &GrantKey,
        mut read: Option<Option<Grant>>,
        client: Option<&McpClient>,
        mut api: F,
    ) -> Result<Called<T>, StoreError>
    where
        F: FnMut(ProviderToken, Option<Account>) -> Fut,
        Fut: Future<Output = Result<T, ApiError>>,
    {
        let mut refreshed_after_401 = false;
        for _attempt in 0..ATTEMPTS {
            let grant = match read.take() {
                Some(grant) => grant,
                None => self.grants().get(key).await?,
            };
            let (token, account, version) =
                match self.access_with(provider, key, grant, client).await? {
                    TokenAccess::Token {
                        token,
                        account,
                        version,
                    } => (token, account, version),
                    TokenAccess::SignInNeeded(why) => return Ok(Called::SignInNeeded(why)),
                    TokenAccess::Unavailable => return Ok(Called::Unavailable(None)),
                };
            match api(token, account).await {
                Ok(answer) => return Ok(Called::Done(answer)),
                // The provider no longer takes the token before its expiry: refresh once.
                Err(ApiError::Unauthorized) if !refreshed_after_401 => {
                    refreshed_after_401 = true;
                    let Some(grant) = self.grants().get(key).await? else {
                        continue;
                    };
                    if grant.version != version {
                        continue; // someone refreshed since our token was refused: use theirs
                    }
                    let refreshed = self.refresh(provider, key, grant, Trigger::OnUse).await?;
                    if let TokenAccess::Unavailable = refreshed {
                        return Ok(Called::Unavailable(None));
                    }
                }
                // Refused even after a refresh, or access denied to this account: a new
                // sign-in is the way out.
                Err(refused @ (ApiError::Unauthorized | ApiError::Forbidden)) => {
                    if let Some(why) = self.refused(provider, key, version, &refused).await? {
                        return Ok(Called::SignInNeeded(why));
                    }
                }
                Err(ApiError::Busy {
                    retry_after_secs, ..
                }) => return Ok(Called::Unavailable(Some(retry_after_secs))),
                Err(other) => return Ok(Called::Failed(other)),
            }
        }
        tracing::warn!(provider = %provider.id, "the provider keeps refusing fresh tokens");
        Ok(Called::Unavailable(None))
    }

    /// The API refused the grant at `version` (401 after a refresh, or 403): it is marked
    /// `needs_reauth` (or a wait for a new sign-in would end at once on it), and the reason
    /// returned; `None` if it changed meanwhile (the newer one is to be tried).
    async fn refused(
        &self,
        provider: &Provider,
        key: &GrantKey,
        version: i64,
        refused: &ApiError,
    ) -> Result<Option<Option<ReauthReason>>, StoreError> {
        tracing::warn!(provider = %provider.id, error = %refused, "the provider refused the grant; asking to connect again");
        let why = match refused {
            ApiError::Forbidden => ReauthReason::AccessWithdrawn,
            _ => ReauthReason::TokenRefused,
        };
        let Some(grant) = self
            .grants()
            .get(key)
            .await?
            .filter(|g| g.version == version)
        else {
            return Ok(None);
        };
        Ok(match self.needs_reauth(provider, key, &grant, why).await? {
            TokenAccess::SignInNeeded(why) => Some(why),
            _ => None,
        })
    }
}
