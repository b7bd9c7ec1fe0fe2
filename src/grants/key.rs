//! Which grant a row is: [`GrantKey`], its sealing binding and its non-reversible tags.

use crate::identity::Principal;
use crate::ids::{AccountId, ProviderId};

/// Which grant: a principal's connection to one account at one provider.
///
/// `account` is the provider's id of the tenant, company or business the grant is used with,
/// or `None` where the provider has no accounts (Stripe, the demo) and on grants stored before
/// several accounts per provider were kept: their account is in their tokens
/// ([`super::Grant::account_id`]), and their key, binding and tag stay what they were, so they open
/// and are found as before.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GrantKey {
    pub principal: Principal,
    pub provider: ProviderId,
    pub account: Option<AccountId>,
}

impl GrantKey {
    /// The key of the one grant at a provider without accounts.
    pub fn sole(principal: &Principal, provider: &ProviderId) -> Self {
        Self {
            principal: principal.clone(),
            provider: provider.clone(),
            account: None,
        }
    }

    /// The associated-data binding for this row's sealed tokens.
    pub(super) fn binding(&self) -> Vec<u8> {
        let mut parts = vec![
            "grant/v1",
            &self.principal.issuer,
            &self.principal.subject,
            &self.provider,
        ];
        if let Some(account) = &self.account {
            parts[0] = "grant/v2";
            parts.push(account.as_str());
        }
        let mut b = Vec::new();
        for part in parts {
            b.extend_from_slice(&(part.len() as u32).to_be_bytes());
            b.extend_from_slice(part.as_bytes());
        }
        b
    }

    /// A non-reversible tag of the grant, for logs and the outbox's per-connection order.
    pub(crate) fn tag(&self) -> String {
        let Some(account) = &self.account else {
            return self.owner_tag();
        };
        crate::seal::digest(
            "grantry/grant-key/v2",
            &[
                self.principal.tag().as_bytes(),
                self.provider.as_bytes(),
                account.as_str().as_bytes(),
            ],
        )
    }

    /// A non-reversible tag of (principal, provider), shared by all the principal's accounts
    /// there: what a retry waiting for a sign-in listens for, and Redis's hash slot.
    pub fn owner_tag(&self) -> String {
        crate::seal::digest(
            "grantry/grant-key/v1",
            &[self.principal.tag().as_bytes(), self.provider.as_bytes()],
        )
    }
}
