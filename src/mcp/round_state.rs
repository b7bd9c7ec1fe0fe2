//! Opening the sealed state of a form or confirmation round: it must open under its purpose,
//! and belong to this caller and these arguments; any failure is the one wire error.

use rmcp::model::ErrorData;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::handler::invalid_request_state;
use super::request_state::arguments_digest;
use crate::identity::Principal;
use crate::seal::{Purpose, constant_time_eq};
use crate::state::AppState;

/// What every round state records about the call it belongs to.
pub(super) trait Bound {
    fn principal_tag(&self) -> &str;
    fn arguments_digest(&self) -> &str;
}

pub(super) fn open<T: DeserializeOwned + Bound>(
    state: &AppState,
    purpose: Purpose,
    sealed: &str,
    principal: &Principal,
    arguments: &Map<String, Value>,
    now: i64,
) -> Result<T, ErrorData> {
    let claims: T = state
        .sealer
        .open_timed(purpose, b"", sealed, now)
        .map_err(|e| {
            tracing::info!(reason = %e, ?purpose, "round state refused");
            invalid_request_state()
        })?;
    let same = constant_time_eq(claims.principal_tag(), &principal.tag())
        && claims.arguments_digest() == arguments_digest(arguments);
    if !same {
        tracing::info!(principal = %principal.tag(), ?purpose, "round state for another request");
        return Err(invalid_request_state());
    }
    Ok(claims)
}
