//! The command line: the subcommands, and the kinds of value the options take. Parsing
//! reads the `--config` file's keys as the options' defaults (see `file`).

use std::ffi::OsString;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use super::file::{FileError, with_file_defaults};
use super::{BridgeArgs, ServeArgs};

/// Command line of the `grantry` binary.
#[derive(Debug, Parser)]
#[command(
    name = "grantry",
    version,
    about = "A URL-mode OAuth connector for MCP: hosts tools over users' third-party accounts and the sign-in routes behind them.",
    args_conflicts_with_subcommands = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// Options of `grantry serve` (the default subcommand).
    #[command(flatten)]
    pub(crate) serve: ServeArgs,
}

impl Cli {
    /// The command line of this process over the `--config` file over the defaults; on a bad
    /// value, says which and exits with status 2.
    pub(crate) fn load() -> Self {
        match Self::load_from(std::env::args_os()) {
            Ok(cli) => cli,
            Err(LoadError::Flags(e)) => e.exit(),
            Err(LoadError::File(e)) => {
                eprintln!("grantry: {e}");
                std::process::exit(2)
            }
        }
    }

    /// As [`Cli::load`], from the given arguments (the program name first).
    pub(crate) fn load_from<I, T>(argv: I) -> Result<Self, LoadError>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let argv: Vec<OsString> = argv.into_iter().map(Into::into).collect();
        let first = Self::try_parse_from(&argv)?;
        let Some(path) = first.serve_args().and_then(|args| args.config.clone()) else {
            return Ok(first);
        };
        let command = with_file_defaults(Self::command(), &path)?;
        Ok(Self::from_arg_matches(
            &command.try_get_matches_from(&argv)?,
        )?)
    }

    /// The serve options of whichever subcommand takes them.
    fn serve_args(&self) -> Option<&ServeArgs> {
        match &self.command {
            None => Some(&self.serve),
            Some(Command::Serve(args) | Command::Migrate(args)) => Some(args),
            Some(Command::Keys(KeysCommand::Status(args) | KeysCommand::Rewrap(args))) => {
                Some(args)
            }
            Some(Command::Events(events)) => Some(events.serve_args()),
            Some(Command::Connections(command)) => Some(command.serve_args()),
            Some(Command::Users(command)) => Some(command.serve_args()),
            Some(Command::Clients(command)) => Some(command.serve_args()),
            Some(Command::Keys(KeysCommand::Generate) | Command::Bridge(_)) => None,
        }
    }
}

/// Why the command line cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LoadError {
    /// A flag, a variable, or a value of the file, as clap reports it.
    #[error(transparent)]
    Flags(#[from] clap::Error),
    /// The file itself: unreadable, not TOML, or a key that is no option.
    #[error(transparent)]
    File(#[from] FileError),
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve MCP on /mcp and the browser sign-in routes (the default).
    Serve(Box<ServeArgs>),
    /// Bring the store's schema up to date and exit (serve does this at start too).
    Migrate(Box<ServeArgs>),
    /// Manage sealing keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Look at and act on the webhook outbox (connection lifecycle events).
    #[command(subcommand)]
    Events(super::events::EventsCommand),
    /// See and revoke people's connections (for operators; any store).
    #[command(subcommand)]
    Connections(super::admin::ConnectionsCommand),
    /// Erase a person from the store (for operators; any store).
    #[command(subcommand)]
    Users(super::admin::UsersCommand),
    /// Refuse an MCP client the use of connections, without disconnecting anything (for
    /// operators; any store).
    #[command(subcommand)]
    Clients(super::admin::ClientsCommand),
    /// A local stdio MCP server for clients that cannot sign in by themselves: it forwards to
    /// a remote server, opens sign-in links in the browser and relays the server's questions.
    Bridge(Box<BridgeArgs>),
}

#[derive(Debug, Subcommand)]
pub(crate) enum KeysCommand {
    /// Print a new random key (base64url, 32 bytes) for GRANTRY_KEYS.
    Generate,
    /// Show how many grants each key seals, and which keys the ring holds.
    Status(Box<ServeArgs>),
    /// Re-seal every grant still under an older key with the first key of GRANTRY_KEYS, in
    /// batches, each grant with compare-and-set on its version.
    Rewrap(Box<ServeArgs>),
}

/// Who the caller is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum IdentityMode {
    /// One local user for every request and browser; loopback listen address and public URL only.
    Dev,
    /// Bearer tokens and browser login from an OpenID Connect issuer (`--oidc-*`).
    Oidc,
}

/// What a client gets when a call needs what it did not declare it can show its person: a
/// sign-in link (URL elicitation), a confirmation (form elicitation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum NoUrlElicitation {
    /// The spec's answer: JSON-RPC -32021 naming the capability (agent frameworks often hide
    /// its message from the model and the person).
    Spec,
    /// A tool result the model reads: the connect link for the person to open, then ask
    /// again (the connect page's identity check makes the link useless to anyone else); for
    /// a confirmation, that nothing was changed and why.
    #[default]
    Link,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}
