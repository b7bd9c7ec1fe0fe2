//! A flow as the SQL backends read it back: plain columns, turned into a [`Flow`].

use super::{Flow, FlowStatus, Handout};
use crate::access::scope_list;
use crate::identity::Principal;
use crate::store::StoreError;

/// The columns every SQL backend selects, in this order.
pub(super) const COLUMNS: &str = "id, ticket_id, principal_iss, principal_sub, provider, verifier_sealed, \
     state_hash, binding_hash, status, created_at, expires_at, claimed_at, scopes, handout";

#[derive(sqlx::FromRow)]
pub(crate) struct FlowRecord {
    id: String,
    ticket_id: String,
    principal_iss: String,
    principal_sub: String,
    provider: String,
    verifier_sealed: Option<String>,
    state_hash: String,
    binding_hash: String,
    status: String,
    created_at: i64,
    expires_at: i64,
    claimed_at: Option<i64>,
    scopes: String,
    handout: String,
}

impl TryFrom<FlowRecord> for Flow {
    type Error = StoreError;

    fn try_from(r: FlowRecord) -> Result<Self, StoreError> {
        Ok(Flow {
            status: FlowStatus::parse(&r.status)?,
            id: r.id,
            ticket_id: r.ticket_id,
            principal: Principal {
                issuer: r.principal_iss,
                subject: r.principal_sub,
            },
            provider: r
                .provider
                .parse()
                .map_err(|e| StoreError::Corrupt(format!("flow row: {e}")))?,
            verifier_sealed: r.verifier_sealed,
            state_hash: r.state_hash,
            binding_hash: r.binding_hash,
            created_at: r.created_at,
            expires_at: r.expires_at,
            claimed_at: r.claimed_at,
            scopes: scope_list(&r.scopes),
            handout: Handout::parse(&r.handout),
        })
    }
}

/// What a failed claim found instead.
pub(super) fn missed_claim(flow: Flow, now: i64) -> super::Claim {
    if flow.status == FlowStatus::Pending && flow.expires_at < now {
        super::Claim::Expired
    } else {
        super::Claim::AlreadyUsed(Box::new(flow))
    }
}
