//! Opening the sealed state of a form or confirmation round: it must open under its purpose,
//! and belong to this caller and these arguments; any failure is the one wire error.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::identity::{Principal, PrincipalTag};
use crate::ids::AccountId;
use crate::mcp_calls::rounds::RoundCall;
use crate::mcp_calls::rounds::request_state::ArgumentsDigest;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::seal::{Purpose, constant_time_eq};
use crate::tools::Arguments;

/// Whose call, with which of the client's arguments, and the account the person chose in an
/// earlier round if any: what every round state is bound to (flattened into it).
#[derive(Serialize, Deserialize)]
pub(super) struct Binding {
    #[serde(rename = "p")]
    principal_tag: PrincipalTag,
    #[serde(rename = "a")]
    arguments: ArgumentsDigest,
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    chosen_account: Option<AccountId>,
}

impl Binding {
    /// The binding of a round of `call`: to the client's own arguments, and the account the
    /// person chose (kept beside them) if any.
    pub(super) fn new(call: &RoundCall<'_>) -> Self {
        Self {
            principal_tag: call.principal.tag(),
            arguments: ArgumentsDigest::of(call.arguments),
            chosen_account: call.chosen_account.cloned(),
        }
    }

    fn matches(&self, principal: &Principal, arguments: &Arguments) -> bool {
        constant_time_eq(&self.principal_tag, &principal.tag())
            && self.arguments == ArgumentsDigest::of(arguments)
    }

    /// The account the person chose in an earlier round, if any.
    pub(super) fn chosen_account(&self) -> Option<&AccountId> {
        self.chosen_account.as_ref()
    }
}

/// A round state, which carries a [`Binding`].
pub(super) trait Bound {
    fn binding(&self) -> &Binding;
}

/// Opens `sealed` as the state of a round of `call` (the client's call, as it came).
pub(super) fn open<T: DeserializeOwned + Bound>(
    call: &RoundCall<'_>,
    purpose: Purpose,
    sealed: &str,
    now: i64,
) -> Result<T, RpcError> {
    let (principal, arguments) = (call.principal, call.arguments);
    let claims: T = call
        .rounds
        .sealer
        .open_timed(purpose, b"", sealed, now)
        .map_err(|e| {
            tracing::info!(reason = %e, ?purpose, "round state refused");
            RpcError::invalid_request_state()
        })?;
    if !claims.binding().matches(principal, arguments) {
        tracing::info!(principal = %principal.tag(), ?purpose, "round state for another request");
        return Err(RpcError::invalid_request_state());
    }
    Ok(claims)
}
