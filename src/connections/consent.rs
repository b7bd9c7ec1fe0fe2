//! Incremental consent: which provider scopes a sign-in asks for, and whether a connection
//! has what a call needs.
//!
//! A sign-in asks for what the calling tool needs and keeps what the person's connections
//! there already have: a write asked for later never takes reading away, and a reconnection
//! from a reading tool never drops write access. Every sign-in asks for the whole union, so
//! a provider that cannot add scopes to an existing grant gets a fresh sign-in for all of it.

use super::Connections;
use crate::access::Access;
use crate::identity::Principal;
use crate::providers::Provider;
use crate::providers::catalog::add_missing;
use crate::store::StoreError;

impl Connections {
    /// The scopes a sign-in of `principal` at `provider` asks for, so that the connection
    /// serves calls with `access`: what those need, and every scope of the catalog's that
    /// the person's connections there hold already.
    pub(crate) async fn scopes_to_ask(
        &self,
        principal: &Principal,
        provider: &Provider,
        access: Access,
    ) -> Result<Vec<String>, StoreError> {
        let mut scopes = provider.scopes_for(access);
        for (_, grant) in self.grants().list(principal, &provider.id).await? {
            let held: Vec<String> = grant
                .tokens
                .scopes
                .into_iter()
                .filter(|scope| provider.knows_scope(scope))
                .collect();
            add_missing(&mut scopes, &held);
        }
        Ok(scopes)
    }
}
