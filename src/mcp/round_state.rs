//! Opening the sealed state of a form or confirmation round: it must open under its purpose,
//! and belong to this caller and these arguments; any failure is the one wire error.

use rmcp::model::ErrorData;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::answers::invalid_request_state;
use super::request_state::arguments_digest;
use crate::identity::Principal;
use crate::seal::{Purpose, constant_time_eq};
use crate::tools::Call;

/// Whose call, with which arguments: what every round state is bound to (flattened into it).
#[derive(Serialize, Deserialize)]
pub(super) struct Binding {
    #[serde(rename = "p")]
    principal_tag: String,
    #[serde(rename = "a")]
    arguments_digest: String,
}

impl Binding {
    pub(super) fn new(principal: &Principal, arguments: &Map<String, Value>) -> Self {
        Self {
            principal_tag: principal.tag(),
            arguments_digest: arguments_digest(arguments),
        }
    }

    fn matches(&self, principal: &Principal, arguments: &Map<String, Value>) -> bool {
        constant_time_eq(&self.principal_tag, &principal.tag())
            && self.arguments_digest == arguments_digest(arguments)
    }
}

/// A round state, which carries a [`Binding`].
pub(super) trait Bound {
    fn binding(&self) -> &Binding;
}

/// Opens `sealed` as the state of a round of `call`.
pub(super) fn open<T: DeserializeOwned + Bound>(
    call: &Call<'_>,
    purpose: Purpose,
    sealed: &str,
    now: i64,
) -> Result<T, ErrorData> {
    let (principal, arguments) = (call.principal, call.arguments);
    let claims: T = call
        .state
        .sealer
        .open_timed(purpose, b"", sealed, now)
        .map_err(|e| {
            tracing::info!(reason = %e, ?purpose, "round state refused");
            invalid_request_state()
        })?;
    if !claims.binding().matches(principal, arguments) {
        tracing::info!(principal = %principal.tag(), ?purpose, "round state for another request");
        return Err(invalid_request_state());
    }
    Ok(claims)
}
