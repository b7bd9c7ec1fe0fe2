//! Sign-in flows: the server-side record of one browser's attempt to connect a provider.
//!
//! A flow is written only when a person presses Continue on the connect page (the MCP round
//! that hands out the link writes nothing), and consumed exactly once at the callback by an
//! atomic status change, so a replayed callback can never redeem a code twice.

mod ended;
mod record;
pub(crate) mod redis;
pub(crate) mod sql;

use async_trait::async_trait;

pub(crate) use ended::SignInsEnded;

use crate::identity::Principal;
use crate::ids::ProviderId;
use crate::store::StoreError;

/// How long a browser has between Continue and the provider's callback.
pub(crate) const FLOW_TTL_SECS: i64 = 600;
/// How long finished and expired flows are kept (so a late callback gets a precise page).
pub(crate) const FLOW_RETENTION_SECS: i64 = 24 * 3600;
/// How long a claimed flow may stay `redeeming`: far longer than a callback's work can take
/// (a token request and an account lookup of at most 10 s each, and the store's write). A flow
/// older than that lost its replica mid-exchange and counts as failed.
pub(crate) const REDEEM_DEADLINE_SECS: i64 = 60;

/// The hash under which a flow stores the OAuth `state` it sent the browser with (the state
/// itself is never stored), and which the callback's `state` is looked up by.
pub(crate) fn oauth_state_hash(state: &str) -> String {
    crate::seal::digest("grantry/oauth-state/v1", &[state.as_bytes()])
}

/// Where a flow stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FlowStatus {
    /// Sent to the provider; waiting for the callback.
    Pending,
    /// The callback claimed it; the code is being redeemed.
    Redeeming,
    /// The grant is stored.
    Connected,
    /// The user (or the provider) said no.
    Denied,
    /// The callback failed (bad binding, bad `iss`, token request failed).
    Failed,
    /// Its principal started too many newer sign-ins; this one can no longer finish.
    Superseded,
}

impl FlowStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            FlowStatus::Pending => "pending",
            FlowStatus::Redeeming => "redeeming",
            FlowStatus::Connected => "connected",
            FlowStatus::Denied => "denied",
            FlowStatus::Failed => "failed",
            FlowStatus::Superseded => "superseded",
        }
    }

    pub(crate) fn parse(text: &str) -> Result<Self, StoreError> {
        Ok(match text {
            "pending" => FlowStatus::Pending,
            "redeeming" => FlowStatus::Redeeming,
            "connected" => FlowStatus::Connected,
            "denied" => FlowStatus::Denied,
            "failed" => FlowStatus::Failed,
            "superseded" => FlowStatus::Superseded,
            other => return Err(StoreError::Corrupt(format!("flow status `{other}`"))),
        })
    }
}

/// How a sign-in's connect link reached the person, which decides what the "connected" page
/// tells them to do next. Carried by the sign-in ticket, then by the flow it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Handout {
    /// Shown by the client (a URL-mode round, or a task), whose call waits for the sign-in
    /// and goes on by itself once it lands.
    #[serde(rename = "w")]
    Waits,
    /// In words the model passed on (link mode, a link nobody opened): nothing waits, so the
    /// person asks the assistant again.
    #[serde(rename = "a")]
    AskAgain,
    /// Through the connect card (MCP Apps), which notices the sign-in and offers Continue.
    #[serde(rename = "c")]
    Card,
    /// From the connections page: no assistant asked for it.
    #[serde(rename = "p")]
    ConnectionsPage,
    /// Said no more precisely: a legacy-era `-32042` (whose client may or may not retry by
    /// itself), or a ticket or flow from before handouts were recorded.
    #[default]
    #[serde(rename = "o")]
    Unsaid,
}

impl Handout {
    /// As the store keeps it (`""` for [`Handout::Unsaid`], what older rows hold).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Handout::Waits => "waits",
            Handout::AskAgain => "ask_again",
            Handout::Card => "card",
            Handout::ConnectionsPage => "connections_page",
            Handout::Unsaid => "",
        }
    }

    /// As stored; anything unknown (a later build's) reads as [`Handout::Unsaid`].
    pub(crate) fn parse(text: &str) -> Self {
        match text {
            "waits" => Handout::Waits,
            "ask_again" => Handout::AskAgain,
            "card" => Handout::Card,
            "connections_page" => Handout::ConnectionsPage,
            _ => Handout::Unsaid,
        }
    }
}

/// One sign-in attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Flow {
    pub id: String,
    /// The sign-in ticket (connect link) this flow started from.
    pub ticket_id: String,
    pub principal: Principal,
    pub provider: ProviderId,
    /// The PKCE verifier, sealed with the flow id as binding.
    pub verifier_sealed: Option<String>,
    /// SHA-256 of the OAuth `state` sent to the provider.
    pub state_hash: String,
    /// SHA-256 of the binding cookie set in the browser at Continue.
    pub binding_hash: String,
    pub status: FlowStatus,
    pub created_at: i64,
    pub expires_at: i64,
    /// When the callback claimed it (`None` while pending).
    pub claimed_at: Option<i64>,
    /// The provider scopes its authorize URL asked for.
    pub scopes: Vec<String>,
    /// How its connect link reached the person.
    pub handout: Handout,
}

impl Flow {
    /// Whether it was claimed and never finished, past [`REDEEM_DEADLINE_SECS`]: the replica
    /// redeeming its code died, and nobody will finish it.
    pub(crate) fn is_stuck(&self, now: i64) -> bool {
        self.status == FlowStatus::Redeeming
            && self
                .claimed_at
                .is_none_or(|at| at + REDEEM_DEADLINE_SECS < now)
    }
}

/// What happened when a callback tried to claim a flow by its state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Claim {
    /// This caller won: the flow moved from pending to redeeming.
    Claimed(Box<Flow>),
    /// The flow exists but is past its expiry.
    Expired,
    /// The flow was already claimed; here it is, as it stands.
    AlreadyUsed(Box<Flow>),
    /// No flow has this state.
    Unknown,
}

/// Storage for flows; one implementation per backend.
#[async_trait]
pub(crate) trait FlowBackend: Send + Sync {
    async fn insert(&self, flow: &Flow) -> Result<(), StoreError>;
    /// Atomically claims the pending, unexpired flow whose state hashes to `state_hash`.
    async fn claim(&self, state_hash: &str, now: i64) -> Result<Claim, StoreError>;
    /// Records how a claimed flow ended.
    async fn finish(&self, flow_id: &str, status: FlowStatus) -> Result<(), StoreError>;
    /// Marks `flow` failed if it is still `redeeming` and was claimed before `claimed_before`;
    /// tells whether it did (one caller wins).
    async fn fail_stuck(&self, flow: &Flow, claimed_before: i64) -> Result<bool, StoreError>;
    /// Keeps the principal's `keep` newest pending flows and marks older pending ones
    /// superseded; returns how many it marked.
    async fn supersede_pending(&self, principal: &Principal, keep: u32) -> Result<u64, StoreError>;
    /// The newest flow started from `ticket_id`, if any: what a held retry watches.
    async fn latest_for_ticket(&self, ticket_id: &str) -> Result<Option<Flow>, StoreError>;
    /// Removes flows that expired before `before`; returns how many.
    async fn delete_expired(&self, before: i64) -> Result<u64, StoreError>;
    /// Removes every flow of `principal`, in any state; returns how many.
    async fn forget(&self, principal: &Principal) -> Result<u64, StoreError>;
    /// Cheap round trip for `/readyz`.
    async fn ping(&self) -> Result<(), StoreError>;
}
