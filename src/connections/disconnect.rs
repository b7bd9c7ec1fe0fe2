//! Disconnecting a connection the person confirmed, whoever asked: the `disconnect_account`
//! tool and the connections page share it, so both remove and revoke the same way and say
//! the same thing about it.
//!
//! The grant is removed first (whatever the provider says, grantry no longer uses the
//! tokens), under its refresh lease so a refresh finishing meanwhile cannot store tokens
//! issued after these were revoked; then the provider is asked to revoke them.

use super::Connections;
use crate::audit::Audit;
use crate::grants::{Grant, GrantKey};
use crate::providers::http::OutboundError;
use crate::providers::invoice::ApiError;
use crate::providers::{Provider, adapters, revocation};
use crate::store::StoreError;
use crate::ui::Lang;

/// How long disconnecting may hold the grant's lease (longer than the revocation request).
const LEASE_MS: i64 = 30_000;
/// Tries for the lease, 100 ms apart, before giving up.
const LEASE_TRIES: u32 = 150;

/// Who ended a connection: said in its `connection.disconnected` event and the audit line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EndedBy {
    /// The person, from the connections page or the `disconnect_account` tool.
    Person,
    /// An operator, with `grantry connections revoke` or `grantry users forget`.
    Operator,
}

impl EndedBy {
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Self::Person => "disconnected by the user",
            Self::Operator => "revoked by an operator",
        }
    }
}

/// What became of a confirmed disconnect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Disconnected {
    /// A refresh held the connection for the whole wait: nothing was removed.
    Busy,
    /// The connection was connected again after the confirmation: nothing was removed.
    Changed,
    /// Another write landed between the read and the removal: nothing was removed.
    Updated,
    /// Nothing is connected any more.
    Gone,
    /// Removed here; what the provider said about revoking it.
    Removed(Revocation),
}

/// The provider's answer to the revocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Revocation {
    Confirmed,
    /// The provider has no revocation endpoint.
    NotOffered,
    /// It answered with this 4xx.
    Refused(u16),
    /// It could not be reached, or failed (5xx): the URL tried, as
    /// [`revocation::shown`] writes it (no credentials, no query), and what went wrong.
    Unreachable {
        url: String,
        error: String,
    },
    /// An API key: nothing to revoke; grantry forgot it, and it works at the provider until
    /// the person deletes it there.
    KeyForgotten,
}

impl Connections {
    /// Removes the connection `key` at `provider`, if it is still the one signed in at
    /// `connected_at` (what was confirmed), and revokes it at the provider.
    pub(crate) async fn disconnect(
        &self,
        key: &GrantKey,
        provider: &Provider,
        connected_at: i64,
        by: EndedBy,
    ) -> Result<Disconnected, StoreError> {
        disconnect(self, key, provider, connected_at, by).await
    }
}

async fn disconnect(
    state: &Connections,
    key: &GrantKey,
    provider: &Provider,
    connected_at: i64,
    by: EndedBy,
) -> Result<Disconnected, StoreError> {
    let lease = super::tokens::lease_name(key);
    let holder = crate::seal::random_id();
    let leases = &state.keeper.leases;
    let mut tries = 0;
    while !leases.try_acquire(&lease, &holder, LEASE_MS).await? {
        tries += 1;
        if tries > LEASE_TRIES {
            return Ok(Disconnected::Busy);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let done = remove_and_revoke(state, provider, key, connected_at, by).await;
    leases.release(&lease, &holder).await?;
    done
}

async fn remove_and_revoke(
    state: &Connections,
    provider: &Provider,
    key: &GrantKey,
    connected_at: i64,
    by: EndedBy,
) -> Result<Disconnected, StoreError> {
    let grant = match state.grants().get(key).await? {
        Some(grant) if grant.signed_in_at() == connected_at => grant,
        Some(_) => return Ok(Disconnected::Changed),
        None => return Ok(Disconnected::Gone),
    };
    let now = grantry_base::clock::unix_now();
    if !state
        .keeper
        .lifecycle
        .disconnect(key, &grant, by.reason(), now)
        .await?
    {
        return Ok(Disconnected::Updated);
    }
    Audit {
        principal: Some(&key.principal),
        provider: Some(&provider.id),
        flow_id: None,
        client: grant.used_by.as_ref(),
    }
    .notice("grant.removed", by.reason());
    let others_remain = !state
        .grants()
        .list(&key.principal, &key.provider)
        .await?
        .is_empty();
    Ok(Disconnected::Removed(
        revoke(state, provider, &grant, others_remain).await,
    ))
}

/// Ends the grant's account alone where the provider has a call for it; `None` where it has
/// none (revoking the token ends this grant only).
async fn end_account_alone(
    state: &Connections,
    provider: &Provider,
    grant: &Grant,
) -> Option<Revocation> {
    let token = &grant.tokens.access_token;
    let api = state.api(provider, token, grant.tokens.account.as_ref());
    let ended = adapters::disconnect_account(&api).await?;
    Some(match ended {
        Ok(()) => Revocation::Confirmed,
        Err(e) => {
            let url = adapters::disconnect_account_url(&api)
                .map(|url| revocation::shown(&url))
                .unwrap_or_default();
            tracing::warn!(provider = %provider.id, %url, error = %e, "ending one account failed");
            match e {
                ApiError::Unauthorized => Revocation::Refused(401),
                ApiError::Forbidden => Revocation::Refused(403),
                ApiError::Rejected(status) => Revocation::Refused(status),
                _ => Revocation::Unreachable {
                    url,
                    error: e.to_string(),
                },
            }
        }
    })
}

/// Asks the provider to revoke the grant's tokens (the refresh token where there is one); where
/// that would also end the person's other accounts there (`others_remain`, at Xero), to end
/// this account alone.
async fn revoke(
    state: &Connections,
    provider: &Provider,
    grant: &Grant,
    others_remain: bool,
) -> Revocation {
    if provider.key_form().is_some() {
        return Revocation::KeyForgotten;
    }
    if others_remain && let Some(ended) = end_account_alone(state, provider, grant).await {
        return ended;
    }
    let (token, is_refresh) = match grant.tokens.refresh_token.as_ref() {
        Some(refresh) => (refresh, true),
        None => (&grant.tokens.access_token, false),
    };
    match revocation::revoke(&state.keeper.http, provider, token, is_refresh).await {
        Ok(true) => Revocation::Confirmed,
        Ok(false) => Revocation::NotOffered,
        Err(e) => {
            let url = revocation::revoke_url(provider).unwrap_or_default();
            tracing::warn!(provider = %provider.id, %url, error = %e, "revocation failed");
            match e {
                OutboundError::Status(status) if status < 500 => Revocation::Refused(status),
                _ => Revocation::Unreachable {
                    url,
                    error: e.to_string(),
                },
            }
        }
    }
}

impl Disconnected {
    /// Whether the connection is gone from grantry (it may still work at the provider).
    pub(crate) fn removed(&self) -> bool {
        matches!(self, Self::Removed(_) | Self::Gone)
    }

    /// What the person is told, in `lang`: `provider` is the provider's display name,
    /// `brand` the deployment's.
    pub(crate) fn message(&self, lang: Lang, brand: &str, provider_name: &str) -> String {
        let key = match self {
            Self::Busy => "disconnect-busy",
            Self::Changed => "disconnect-changed",
            Self::Updated => "disconnect-updated",
            Self::Gone => "disconnect-gone",
            Self::Removed(Revocation::Confirmed) => "disconnect-confirmed",
            Self::Removed(Revocation::NotOffered) => "disconnect-not-offered",
            Self::Removed(Revocation::Refused(_)) => "disconnect-refused",
            Self::Removed(Revocation::Unreachable { .. }) => "disconnect-unreachable",
            Self::Removed(Revocation::KeyForgotten) => "disconnect-key-forgotten",
        };
        let status = match self {
            Self::Removed(Revocation::Refused(code)) => code.to_string(),
            _ => String::new(),
        };
        let args = [
            ("provider", provider_name),
            ("brand", brand),
            ("status", &status),
        ];
        lang.t_with(key, &args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_outcome_says_whether_the_provider_confirmed_refused_or_was_unreachable() {
        let said = |d: Disconnected| d.message(Lang::En, "grantry", "Xero");
        assert!(said(Disconnected::Removed(Revocation::Confirmed)).contains("confirmed"));
        assert!(said(Disconnected::Removed(Revocation::Refused(400))).contains("refused"));
        let unreachable = Revocation::Unreachable {
            url: "https://idp.example/revoke".into(),
            error: "timed out".into(),
        };
        assert!(said(Disconnected::Removed(unreachable)).contains("could not be reached"));
        assert!(said(Disconnected::Removed(Revocation::NotOffered)).contains("offers no way"));
        assert!(
            said(Disconnected::Removed(Revocation::KeyForgotten))
                .contains("stays valid at Xero until you delete it there")
        );
        for kept in [
            Disconnected::Busy,
            Disconnected::Changed,
            Disconnected::Updated,
        ] {
            assert!(!kept.removed());
            assert!(said(kept).contains("nothing was removed"));
        }
    }
}
