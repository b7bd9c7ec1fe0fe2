//! What the keep-alive reads and writes of the grants: the rows due for a look (without their
//! tokens: most looks need none), and each one's next look, moved without a new version.

use super::health::{Health, State};
use super::{GrantKey, Grants};
use crate::store::StoreError;

/// A grant's next look by the keep-alive: `at` (0: never), if its row still has `version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reschedule {
    pub(crate) key: GrantKey,
    pub(crate) version: i64,
    pub(crate) at: i64,
}

impl Reschedule {
    /// Off the keep-alive (no provider offers it any more, or no refresh token to keep alive).
    pub fn never(key: &GrantKey, version: i64) -> Self {
        Self {
            key: key.clone(),
            version,
            at: 0,
        }
    }
}

/// A grant due for the keep-alive, as its row says: enough to decide, without its tokens,
/// whether it needs a refresh or a warning, or only a later look.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Due {
    pub key: GrantKey,
    pub(crate) version: i64,
    pub(crate) state: State,
    pub(crate) health: Health,
    /// The last write of its tokens.
    pub(crate) updated_at: i64,
}

impl Due {
    /// The bookkeeping of an opened grant (what the keep-alive reads of a row, for the tests).
    #[cfg(test)]
    pub(crate) fn of(key: &GrantKey, grant: &super::Grant) -> Self {
        Self {
            key: key.clone(),
            version: grant.version,
            state: grant.state,
            health: grant.health.clone(),
            updated_at: grant.updated_at,
        }
    }
}

impl Grants {
    /// Moves the keep-alive's next looks, in one write.
    pub(crate) async fn reschedule(&self, moves: &[Reschedule]) -> Result<(), StoreError> {
        self.backend.reschedule(moves).await
    }

    /// Up to `limit` grants the keep-alive should look at by `now`, the most overdue first,
    /// as their rows say (the tokens stay sealed: most looks need none).
    pub(crate) async fn due_for_keepalive(
        &self,
        now: i64,
        limit: usize,
    ) -> Result<Vec<Due>, StoreError> {
        let rows = self.backend.due_for_keepalive(now, limit).await?;
        rows.into_iter()
            .map(|(key, row)| {
                let state = State::parse(&row.state).ok_or_else(|| {
                    StoreError::Corrupt(format!("grant {}: state `{}`", key.tag(), row.state))
                })?;
                Ok(Due {
                    version: row.version,
                    state,
                    health: Health::from_json(&row.health),
                    updated_at: row.updated_at,
                    key,
                })
            })
            .collect()
    }

    /// How many grants each (provider, state) has.
    pub async fn count_by_state(&self) -> Result<Vec<(String, String, i64)>, StoreError> {
        self.backend.count_by_state().await
    }
}
