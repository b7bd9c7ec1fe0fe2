//! The `requestState` of a sign-in round: what a retry must bring back.
//!
//! Sealed (purpose "request state") with: the sign-in ticket and its link, a tag of the
//! principal, the method, the tool, a digest of the canonical arguments and an expiry. A retry
//! presented by anyone else, for another tool or other arguments, or after the expiry, does
//! not open; every such failure gets the same wire error and only the log says which it was.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::access::Access;
use crate::identity::{Principal, PrincipalTag};
use crate::ids::AccountId;
use crate::providers::ProviderId;
use crate::seal::{Purpose, Sealer, digest};
use crate::tools::Arguments;

const METHOD: &str = "tools/call";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateClaims {
    /// The sign-in ticket id (the flow's correlation id).
    #[serde(rename = "t")]
    pub(crate) ticket_id: String,
    /// The sealed ticket, so a fresh round can hand out the very same link.
    #[serde(rename = "l")]
    pub(crate) sealed_ticket: String,
    /// When the ticket (and so the link) expires; a later round renews it.
    #[serde(rename = "x")]
    pub(crate) ticket_expires_at: i64,
    #[serde(rename = "v")]
    pub(crate) provider: ProviderId,
    /// What the connection is asked for: a renewed link asks for the same.
    #[serde(rename = "c", default)]
    pub(crate) access: Access,
    /// The account the call was pinned to (a person's choice among several), where the retry
    /// goes on.
    #[serde(rename = "w", default, skip_serializing_if = "Option::is_none")]
    pub(crate) account: Option<AccountId>,
    #[serde(rename = "p")]
    principal_tag: PrincipalTag,
    #[serde(rename = "m")]
    method: String,
    #[serde(rename = "n")]
    tool: String,
    #[serde(rename = "a")]
    arguments: ArgumentsDigest,
}

/// The request a state answers: who called which tool with which arguments.
#[derive(Debug, Clone)]
pub struct ToolRequest<'a> {
    pub principal: &'a Principal,
    pub tool: &'a str,
    pub arguments: ArgumentsDigest,
}

/// A call's arguments as a round's state binds them: SHA-256 over their wire form as
/// canonical JSON (keys sorted at every level), so the order a client sends keys in does not
/// matter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ArgumentsDigest(String);

impl ArgumentsDigest {
    /// Of a call's typed arguments (by their wire form, which reads back to the same).
    pub(crate) fn of(arguments: &Arguments) -> Self {
        Self::of_wire(&arguments.to_wire())
    }

    /// Of arguments as the wire has them (a task's, kept as [`ArgumentsDigest::of`] saw
    /// them).
    pub fn of_wire(arguments: &Map<String, Value>) -> Self {
        let mut canonical = String::new();
        write_canonical_object(arguments, &mut canonical);
        Self(digest("grantry/arguments/v1", &[canonical.as_bytes()]))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// Why a presented state was refused (for the log only).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StateRejection {
    #[error("does not open: {0}")]
    Seal(#[from] crate::seal::OpenError),
    #[error("issued to another principal")]
    OtherPrincipal,
    #[error("issued for another request")]
    OtherRequest,
}

impl StateClaims {
    /// The state of a round that asks `request`'s caller to sign in to `provider` with the
    /// ticket `ticket_id` (sealed as `sealed_ticket`, valid until `ticket_expires_at`).
    pub(crate) fn new(
        ticket_id: &str,
        sealed_ticket: &str,
        ticket_expires_at: i64,
        provider: &ProviderId,
        request: ToolRequest<'_>,
    ) -> Self {
        Self {
            ticket_id: ticket_id.to_owned(),
            sealed_ticket: sealed_ticket.to_owned(),
            ticket_expires_at,
            provider: provider.clone(),
            access: Access::Read,
            account: None,
            principal_tag: request.principal.tag(),
            method: METHOD.to_owned(),
            tool: request.tool.to_owned(),
            arguments: request.arguments,
        }
    }

    pub(crate) fn seal(&self, sealer: &Sealer, now: i64, ttl_secs: i64) -> String {
        sealer.seal_timed(Purpose::RequestState, b"", self, now, ttl_secs)
    }

    /// Opens a presented state and checks it belongs to this caller and this request.
    pub fn open(
        sealer: &Sealer,
        sealed: &str,
        now: i64,
        request: ToolRequest<'_>,
    ) -> Result<Self, StateRejection> {
        let claims: Self = sealer.open_timed(Purpose::RequestState, b"", sealed, now)?;
        if !crate::seal::constant_time_eq(&claims.principal_tag, &request.principal.tag()) {
            return Err(StateRejection::OtherPrincipal);
        }
        if claims.method != METHOD
            || claims.tool != request.tool
            || claims.arguments != request.arguments
        {
            return Err(StateRejection::OtherRequest);
        }
        Ok(claims)
    }
}

fn write_canonical_object(map: &Map<String, Value>, out: &mut String) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    out.push('{');
    for (i, key) in keys.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::String((*key).clone()).to_string());
        out.push(':');
        write_canonical(&map[key.as_str()], out);
    }
    out.push('}');
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => write_canonical_object(map, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests;
