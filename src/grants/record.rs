//! A grant row with its key, as the SQL backends read it back for a key rotation.

use super::{GrantKey, GrantRow};
use crate::identity::Principal;
use crate::ids::AccountId;
use crate::store::StoreError;

#[derive(sqlx::FromRow)]
pub(super) struct GrantRecord {
    principal_iss: String,
    principal_sub: String,
    provider: String,
    account: String,
    #[sqlx(flatten)]
    row: GrantRow,
}

impl GrantRecord {
    /// The row and its key; a provider column that is no provider id is a corrupt row.
    pub(super) fn into_parts(self) -> Result<(GrantKey, GrantRow), StoreError> {
        let provider = self
            .provider
            .parse()
            .map_err(|e| StoreError::Corrupt(format!("grant row: {e}")))?;
        let key = GrantKey {
            principal: Principal {
                issuer: self.principal_iss,
                subject: self.principal_sub,
            },
            provider,
            account: AccountId::given(self.account),
        };
        Ok((key, self.row))
    }
}
