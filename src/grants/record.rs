//! A grant row with its key, as the SQL backends read it back for a key rotation.

use super::{GrantKey, GrantRow};
use crate::identity::Principal;

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
    pub(super) fn into_parts(self) -> (GrantKey, GrantRow) {
        (
            GrantKey {
                principal: Principal {
                    issuer: self.principal_iss,
                    subject: self.principal_sub,
                },
                provider: self.provider,
                account: self.account,
            },
            self.row,
        )
    }
}
