//! Grants as the operators' commands read them: every row, or one person's, whether or not
//! its tokens open, and the removal of one that does not.

use super::{Grant, GrantKey, GrantRow, Grants};
use crate::identity::Principal;
use crate::store::StoreError;

/// A stored grant as an operator's command finds it.
#[derive(Debug, Clone)]
pub(crate) enum Found {
    Opened(Box<Grant>),
    /// Its tokens do not open (sealed under a key no longer in the ring, or damaged).
    Unreadable(Box<GrantRow>),
}

impl Found {
    pub(crate) fn created_at(&self) -> i64 {
        match self {
            Self::Opened(grant) => grant.created_at,
            Self::Unreadable(row) => row.created_at,
        }
    }
}

impl Grants {
    /// Every grant, or every grant of `principal`, by person, provider and connection time:
    /// for operators. A row whose tokens do not open is found too ([`Found::Unreadable`]), so
    /// it can be listed and removed.
    pub(crate) async fn all(
        &self,
        principal: Option<&Principal>,
    ) -> Result<Vec<(GrantKey, Found)>, StoreError> {
        let _span =
            crate::telemetry::store_span("grants all", self.backend.system(), "all", "grants");
        let mut found: Vec<(GrantKey, Found)> = Vec::new();
        for (key, row) in self.backend.all(principal).await? {
            let each = match self.open(&key, row.clone()) {
                Ok(grant) => Found::Opened(Box::new(grant)),
                Err(_) => Found::Unreadable(Box::new(row)),
            };
            found.push((key, each));
        }
        found.sort_by_cached_key(|(key, each)| {
            let who = &key.principal;
            let at = key.provider.to_string();
            (
                who.issuer.clone(),
                who.subject.clone(),
                at,
                each.created_at(),
            )
        });
        Ok(found)
    }

    /// Removes a row whose tokens do not open, if it still has `version`: no event (there is
    /// nothing to say it held), no revocation (there is no token to revoke with).
    pub(crate) async fn remove_unreadable(
        &self,
        key: &GrantKey,
        version: i64,
    ) -> Result<bool, StoreError> {
        self.backend.delete_if_version(key, version, &[]).await
    }
}
