//! `grantry connections`, `grantry users` and `grantry clients`: the operators' commands on
//! connections, people and MCP clients. Each takes the serve options (for the store, the keys and the providers) and its
//! own.

use clap::{Args, Subcommand};

use super::ServeArgs;

/// What the operators' commands end with, in each one's `--help`.
const EXIT_CODES: &str = "Exit codes: 0 done; 1 failed, declined, or a connection kept (in use: \
run it again); 2 a bad argument, or --yes missing; 3 nothing stored for that person.";

/// What `grantry clients` ends with.
const CLIENT_EXIT_CODES: &str = "Exit codes: 0 done; 1 failed or declined; 2 a bad argument, or \
--yes missing; 3 unblock of a client that is not blocked.";

#[derive(Debug, Subcommand)]
#[command(after_help = EXIT_CODES)]
pub(crate) enum ConnectionsCommand {
    /// List connections: person, provider, account, state, when connected and last used.
    List(Box<ListArgs>),
    /// Revoke a person's connections (at one provider, or all): each is removed, revoked at
    /// its provider and reported with what the provider said; `connection.disconnected` is
    /// sent to the webhook endpoints.
    Revoke(Box<RevokeArgs>),
}

#[derive(Debug, Subcommand)]
#[command(after_help = EXIT_CODES)]
pub(crate) enum UsersCommand {
    /// Erase a person: their connections are revoked, then every sign-in attempt,
    /// legacy-era session, rate counter and webhook delivery of theirs is removed; prints
    /// what was removed.
    Forget(Box<ForgetArgs>),
}

#[derive(Debug, Subcommand)]
#[command(after_help = CLIENT_EXIT_CODES)]
pub(crate) enum ClientsCommand {
    /// Refuse one MCP client the use of connections: its tool calls get an error saying the
    /// operator blocked it; no connection changes, and other clients go on working. Every
    /// replica follows within seconds.
    Block(Box<ClientArgs>),
    /// Let a blocked client use connections again.
    Unblock(Box<ClientArgs>),
    /// List the blocked clients.
    List(Box<BlockedListArgs>),
}

impl ClientsCommand {
    pub(crate) fn serve_args(&self) -> &ServeArgs {
        match self {
            Self::Block(args) | Self::Unblock(args) => &args.serve,
            Self::List(args) => &args.serve,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct ClientArgs {
    /// The client id its access tokens are issued to (their `azp` or `client_id` claim, as
    /// `connections list` shows it under last used by): only a verified id can be blocked.
    #[arg(value_name = "CLIENT_ID")]
    pub(crate) client_id: String,
    #[command(flatten)]
    pub(crate) confirm: Confirm,
    #[command(flatten)]
    pub(crate) output: Output,
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

#[derive(Debug, Args)]
pub(crate) struct BlockedListArgs {
    #[command(flatten)]
    pub(crate) output: Output,
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

impl ConnectionsCommand {
    pub(crate) fn serve_args(&self) -> &ServeArgs {
        match self {
            Self::List(args) => &args.serve,
            Self::Revoke(args) => &args.serve,
        }
    }
}

impl UsersCommand {
    pub(crate) fn serve_args(&self) -> &ServeArgs {
        match self {
            Self::Forget(args) => &args.serve,
        }
    }
}

/// How the operators' commands print.
#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct Output {
    /// Print JSON (one document) instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// Whether a command that changes something may go ahead without asking.
#[derive(Debug, Clone, Copy, Args)]
pub(crate) struct Confirm {
    /// Go ahead without asking (required when standard input is not a terminal).
    #[arg(long)]
    pub(crate) yes: bool,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only this person's: the issuer and subject of their identity (`dev` mode: `urn:grantry:dev local-user`).
    #[arg(long, num_args = 2, value_names = ["ISSUER", "SUBJECT"])]
    pub(crate) user: Option<Vec<String>>,
    /// Only connections to this provider (its id in the catalog).
    #[arg(long, value_name = "P")]
    pub(crate) provider: Option<String>,
    /// Only connections in this state.
    #[arg(long, value_name = "S", value_parser = ["active", "refresh_failing", "needs_reauth"])]
    pub(crate) state: Option<String>,
    #[command(flatten)]
    pub(crate) output: Output,
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

#[derive(Debug, Args)]
pub(crate) struct RevokeArgs {
    /// The person whose connections end: the issuer and subject of their identity.
    #[arg(long, required = true, num_args = 2, value_names = ["ISSUER", "SUBJECT"])]
    pub(crate) user: Vec<String>,
    /// Only their connections to this provider [default: all of them].
    #[arg(long, value_name = "P")]
    pub(crate) provider: Option<String>,
    #[command(flatten)]
    pub(crate) confirm: Confirm,
    #[command(flatten)]
    pub(crate) output: Output,
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ForgetArgs {
    /// The person to erase: the issuer and subject of their identity.
    #[arg(long, required = true, num_args = 2, value_names = ["ISSUER", "SUBJECT"])]
    pub(crate) user: Vec<String>,
    #[command(flatten)]
    pub(crate) confirm: Confirm,
    #[command(flatten)]
    pub(crate) output: Output,
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}
