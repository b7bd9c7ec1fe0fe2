//! `grantry events`: the operators' commands on the webhook outbox. Each takes the serve
//! options (for the store) and its own.

use clap::{Args, Subcommand};

use super::ServeArgs;

#[derive(Debug, Subcommand)]
pub(crate) enum EventsCommand {
    /// List webhook deliveries, newest first: event id, type, endpoint, status, attempts,
    /// when the event happened, and why the last attempt failed.
    List(Box<ListArgs>),
    /// Send parked deliveries again (all of them, or one event's), from a first attempt.
    Retry(Box<RetryArgs>),
    /// Send deliveries that were delivered in the last hours again, with the same
    /// webhook-id (receivers dedupe on it): for an endpoint that lost what it received.
    Replay(Box<ReplayArgs>),
}

impl EventsCommand {
    pub(crate) fn serve_args(&self) -> &ServeArgs {
        match self {
            Self::List(args) => &args.serve,
            Self::Retry(args) => &args.serve,
            Self::Replay(args) => &args.serve,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only deliveries with this status.
    #[arg(long, value_parser = ["pending", "delivered", "parked"])]
    pub(crate) status: Option<String>,
    /// At most this many.
    #[arg(long, default_value_t = 50)]
    pub(crate) limit: usize,
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

#[derive(Debug, Args)]
pub(crate) struct RetryArgs {
    /// Only this event's parked deliveries (its webhook-id) [default: every parked one].
    #[arg(long, value_name = "ID")]
    pub(crate) event: Option<String>,
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// Deliveries delivered within this many hours (1-168; SQL stores keep them 7 days,
    /// Redis the last 20 of each connection and endpoint).
    #[arg(long, value_name = "HOURS", value_parser = clap::value_parser!(u32).range(1..=168))]
    pub(crate) since_hours: u32,
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}
