//! The `grantry` command's commands: serving (logging, the state, the listener, until SIGINT
//! or SIGTERM, in [`super`], which the conformance build shares), the keys, the store's
//! migrations, the bridge, the outbox's events and the operators' commands on connections,
//! people and clients. The binary is only this `main`, with its allocator.

use std::process::ExitCode;

use super::configure;
use crate::config::{Cli, Command, KeysCommand, ServeArgs};
use crate::providers::http::install_tls_provider;
use crate::store::StoreUrl;

#[macro_use]
mod output;
mod admin;
mod events;
mod keys;

/// The `grantry` command line: the command it names, run to its exit status.
pub fn main() -> ExitCode {
    let cli = Cli::load();
    match cli.command {
        Some(Command::Keys(KeysCommand::Generate)) => {
            out!("{}", crate::seal::generate_key());
            ExitCode::SUCCESS
        }
        Some(Command::Keys(KeysCommand::Status(args))) => keys::status(*args),
        Some(Command::Keys(KeysCommand::Rewrap(args))) => keys::rewrap(*args),
        Some(Command::Serve(args)) => crate::program::serve(*args, None),
        Some(Command::Migrate(args)) => migrate(*args),
        Some(Command::Bridge(args)) => grantry_bridge::program::main(*args),
        Some(Command::Events(command)) => events::run(command),
        Some(Command::Connections(command)) => admin::connections(command),
        Some(Command::Users(command)) => admin::users(command),
        Some(Command::Clients(command)) => admin::clients(command),
        None => crate::program::serve(cli.serve, None),
    }
}

fn migrate(args: ServeArgs) -> ExitCode {
    let config = match configure(args) {
        Ok(config) => config,
        Err(refused) => return refused,
    };
    install_tls_provider();
    if matches!(config.store, StoreUrl::Sqlite(_))
        && let Err(e) = grantry_base::private_files::prepare(&config.data_dir)
    {
        eprintln!(
            "grantry: --data-dir (GRANTRY_DATA_DIR): cannot make {} private to this user: {e}",
            config.data_dir.display()
        );
        return ExitCode::from(1);
    }
    let runtime = tokio::runtime::Runtime::new().expect("the tokio runtime starts");
    let opened = runtime.block_on(crate::startup::open_stores(
        &config.store,
        &config.store_prefix,
    ));
    match opened {
        Ok(_) => {
            out!("store {} is up to date", config.store);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("grantry: --store (GRANTRY_STORE): {e}");
            ExitCode::from(1)
        }
    }
}
