//! What the rounds work with, lent from the state for one call: the sealer of their
//! `requestState`, the sign-in attempts and the marks of opened links, the places and turns
//! of held retries, their settings, and the tool's own services. Nothing else of the process
//! is within their reach.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::config::NoUrlElicitation;
use crate::flows::FlowBackend;
use crate::identity::{McpClient, Principal};
use crate::ids::AccountId;
use crate::leases::LeaseBackend;
use crate::quota::Quota;
use crate::seal::Sealer;
use crate::state::AppState;
use crate::tools::{self, Arguments};

/// The rounds' services (see the module's words).
#[derive(Clone, Copy)]
pub(crate) struct Rounds<'a> {
    pub(crate) sealer: &'a Sealer,
    /// Sign-in attempts: whether the one a round started has ended.
    pub(crate) flows: &'a dyn FlowBackend,
    /// Whether a round's link was opened (a single-use mark its page leaves).
    pub(crate) leases: &'a dyn LeaseBackend,
    /// Places for retries held open while a sign-in is pending, shared fairly by principal.
    pub(crate) held: &'a Arc<Quota<String>>,
    /// Turns for held retries to read the store (see [`crate::state::HOLD_TURNS`]).
    pub(crate) hold_turns: &'a Semaphore,
    pub(crate) settings: RoundSettings,
    /// What the tool itself may use.
    pub(crate) tools: tools::Services<'a>,
}

/// The options the rounds follow.
#[derive(Clone, Copy)]
pub(crate) struct RoundSettings {
    /// What a client without URL-mode elicitation gets (`--no-url-elicitation`).
    pub(crate) no_url_elicitation: NoUrlElicitation,
    /// How long a round's `requestState` and its connect link work.
    pub(crate) request_state_ttl_secs: i64,
    /// How long a retry is held while its sign-in is pending (`--retry-hold`).
    pub(crate) retry_hold: Duration,
    /// How long a held retry waits for its link to be opened at all.
    pub(crate) unopened_link_wait: Duration,
    /// How often a held retry looks at the store besides being woken.
    pub(crate) hold_poll_interval: Duration,
}

impl<'a> Rounds<'a> {
    /// The rounds' share of `state`.
    pub(crate) fn lent_by(state: &'a AppState) -> Self {
        let config = &state.config;
        Self {
            sealer: &state.sealer,
            flows: state.flows.as_ref(),
            leases: state.leases.as_ref(),
            held: &state.held,
            hold_turns: &state.hold_turns,
            settings: RoundSettings {
                no_url_elicitation: config.no_url_elicitation,
                request_state_ttl_secs: config.request_state_ttl_secs,
                retry_hold: config.retry_hold,
                unopened_link_wait: config.unopened_link_wait,
                hold_poll_interval: config.hold_poll_interval,
            },
            tools: tools::Services {
                connections: &state.connections,
                catalog: &state.catalog,
                language: config.default_language,
                brand: config.brand.name.as_str(),
                public_url: &config.public_url,
            },
        }
    }
}

/// A tool call in its rounds: the tool's call, and what the rounds work with. It reads as the
/// tool's call (its principal, typed arguments, chosen account), which is what the rounds
/// pass on to the tool.
#[derive(Clone, Copy)]
pub(crate) struct RoundCall<'a> {
    pub(crate) rounds: Rounds<'a>,
    pub(crate) tool_call: tools::Call<'a>,
}

impl<'a> RoundCall<'a> {
    /// A call of `principal` (through `client`) with `arguments`, as the client sent them.
    pub(crate) fn new(
        rounds: Rounds<'a>,
        (principal, client): (&'a Principal, Option<&'a McpClient>),
        arguments: &'a Arguments,
    ) -> Self {
        let tool_call = tools::Call {
            services: rounds.tools,
            principal,
            client,
            arguments,
            chosen_account: None,
        };
        Self { rounds, tool_call }
    }

    /// The same call at `chosen_account`, where the person chose it in a round (`None`: at
    /// the account the client named, if any).
    pub(crate) fn at<'b>(&self, chosen_account: Option<&'b AccountId>) -> RoundCall<'b>
    where
        'a: 'b,
    {
        RoundCall {
            rounds: self.rounds,
            tool_call: tools::Call {
                chosen_account,
                ..self.tool_call
            },
        }
    }
}

impl<'a> std::ops::Deref for RoundCall<'a> {
    type Target = tools::Call<'a>;
    fn deref(&self) -> &tools::Call<'a> {
        &self.tool_call
    }
}
