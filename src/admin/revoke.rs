//! `grantry connections revoke`: each selected connection removed and revoked at its provider
//! the way a person's own disconnect does it (under the refresh lease, with its
//! `connection.disconnected` event, "revoked by an operator"), and what the provider said.

use serde::Serialize;

use super::{Admin, AdminError, Listed, describe};
use crate::connections::{Disconnected, EndedBy, Revocation};
use crate::grants::{Found, Grant, GrantKey};
use crate::identity::Principal;
use crate::ids::ProviderId;
use crate::store::StoreError;

/// What became of one connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub(crate) enum Outcome {
    /// Removed, and the provider confirmed the revocation.
    Revoked,
    /// Removed; the provider offers no revocation.
    RemovedNotOffered,
    /// Removed; the provider refused the revocation with this status.
    RemovedRefused { status: u16 },
    /// Removed; the provider could not be reached (or failed): the URL tried (without
    /// credentials or query) and what went wrong.
    RemovedUnreachable {
        revocation_url: String,
        error: String,
    },
    /// Removed; an API key, which stays valid at the provider until deleted there.
    RemovedKeyForgotten,
    /// Removed; its provider is no longer configured, so it was not revoked there.
    RemovedNotConfigured,
    /// Removed; its tokens did not open (a key no longer in the ring), so it was not revoked.
    RemovedUnreadable,
    /// Kept: a refresh held it the whole time, or it changed meanwhile; run again.
    Kept,
    /// Already gone when its turn came.
    Gone,
}

impl Outcome {
    fn of(done: Disconnected) -> Self {
        match done {
            Disconnected::Removed(Revocation::Confirmed) => Self::Revoked,
            Disconnected::Removed(Revocation::NotOffered) => Self::RemovedNotOffered,
            Disconnected::Removed(Revocation::Refused(status)) => Self::RemovedRefused { status },
            Disconnected::Removed(Revocation::Unreachable { url, error }) => {
                Self::RemovedUnreachable {
                    revocation_url: url,
                    error,
                }
            }
            Disconnected::Removed(Revocation::KeyForgotten) => Self::RemovedKeyForgotten,
            Disconnected::Gone => Self::Gone,
            Disconnected::Busy | Disconnected::Changed | Disconnected::Updated => Self::Kept,
        }
    }

    /// Whether the connection is no longer stored.
    pub(crate) fn removed(&self) -> bool {
        !matches!(self, Self::Kept)
    }

    /// One line for an operator.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Revoked => "removed; the provider confirmed the revocation".into(),
            Self::RemovedNotOffered => "removed; the provider offers no revocation".into(),
            Self::RemovedRefused { status } => {
                format!("removed; the provider refused the revocation (HTTP {status})")
            }
            Self::RemovedUnreachable {
                revocation_url,
                error,
            } => {
                format!(
                    "removed; the provider could not be reached ({error}); tried {revocation_url}"
                )
            }
            Self::RemovedKeyForgotten => {
                "removed; an API key stays valid at the provider until deleted there".into()
            }
            Self::RemovedNotConfigured => {
                "removed; its provider is not configured, so it was not revoked there".into()
            }
            Self::RemovedUnreadable => {
                "removed; its tokens did not open, so it was not revoked at the provider".into()
            }
            Self::Kept => "kept: it was in use or changed meanwhile; run the command again".into(),
            Self::Gone => "already gone".into(),
        }
    }
}

/// One connection and what became of it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Revoked {
    pub(crate) connection: Listed,
    #[serde(flatten)]
    pub(crate) outcome: Outcome,
}

/// The connections a revocation will end, checked before anything changes.
pub(crate) struct Plan(pub(super) Vec<(GrantKey, Found)>);

impl Plan {
    pub(crate) fn listed(&self) -> Vec<Listed> {
        self.0.iter().map(|(k, g)| Listed::of(k, g)).collect()
    }
}

impl Admin {
    /// What `grantry connections revoke` would end: `user`'s connections (at `provider`).
    /// An unknown provider, or a person with no such connection, is an error.
    pub(crate) async fn plan_revoke(
        &self,
        user: &Principal,
        provider: Option<&ProviderId>,
    ) -> Result<Plan, AdminError> {
        let filter = super::Filter {
            user: Some(user.clone()),
            provider: provider.cloned(),
            state: None,
        };
        let selected = self.selected(&filter).await?;
        if selected.is_empty() {
            let at = provider.map(|p| format!(" at {p}")).unwrap_or_default();
            return Err(AdminError::UnknownUser(format!(
                "{}: no connection{at}",
                describe(user)
            )));
        }
        Ok(Plan(selected))
    }

    /// Ends each connection of `plan`, one after the other.
    pub(crate) async fn revoke(&self, plan: Plan) -> Result<Vec<Revoked>, StoreError> {
        let mut done = Vec::with_capacity(plan.0.len());
        for (key, found) in plan.0 {
            let outcome = match &found {
                Found::Opened(grant) => self.end(&key, grant).await?,
                Found::Unreadable(row) => {
                    let grants = self.connections.grants();
                    match grants.remove_unreadable(&key, row.version).await? {
                        true => Outcome::RemovedUnreadable,
                        false => Outcome::Kept,
                    }
                }
            };
            done.push(Revoked {
                connection: Listed::of(&key, &found),
                outcome,
            });
        }
        Ok(done)
    }

    async fn end(&self, key: &GrantKey, grant: &Grant) -> Result<Outcome, StoreError> {
        let Some(provider) = self.catalog.get(&key.provider) else {
            let now = grantry_base::clock::unix_now();
            let lifecycle = self.connections.lifecycle();
            let removed = lifecycle
                .disconnect(key, grant, EndedBy::Operator.reason(), now)
                .await?;
            return Ok(if removed {
                Outcome::RemovedNotConfigured
            } else {
                Outcome::Kept
            });
        };
        let done = self
            .connections
            .disconnect(key, provider, grant.signed_in_at(), EndedBy::Operator)
            .await?;
        Ok(Outcome::of(done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_provider_is_reported_with_the_url_tried() {
        let outcome = Outcome::RemovedUnreachable {
            revocation_url: "https://idp.example/oauth/revoke".into(),
            error: "provider unreachable or timed out: timed out".into(),
        };
        assert_eq!(
            outcome.describe(),
            "removed; the provider could not be reached (provider unreachable or timed out: \
             timed out); tried https://idp.example/oauth/revoke"
        );
        assert_eq!(
            serde_json::to_value(&outcome).unwrap(),
            serde_json::json!({
                "outcome": "removed_unreachable",
                "revocation_url": "https://idp.example/oauth/revoke",
                "error": "provider unreachable or timed out: timed out",
            })
        );
    }
}
