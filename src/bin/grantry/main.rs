//! The `grantry` binary: its commands. Serving (logging, the state, the listener, until SIGINT
//! or SIGTERM) is [`grantry::program`], which the conformance build shares.

use std::process::ExitCode;

use grantry::config::{Cli, Command, KeysCommand, ServeArgs};
use grantry::store::StoreUrl;

#[macro_use]
mod output;
mod admin;
mod events;
mod keys;

// glibc's malloc and free were about 12 % of a sign-in round's CPU under load (perf); mimalloc's
// per-thread free lists make the many small, short-lived allocations of a request cheaper.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::load();
    match cli.command {
        Some(Command::Keys(KeysCommand::Generate)) => {
            out!("{}", grantry::seal::generate_key());
            ExitCode::SUCCESS
        }
        Some(Command::Keys(KeysCommand::Status(args))) => keys::status(*args),
        Some(Command::Keys(KeysCommand::Rewrap(args))) => keys::rewrap(*args),
        Some(Command::Serve(args)) => grantry::program::serve(*args, None),
        Some(Command::Migrate(args)) => migrate(*args),
        Some(Command::Bridge(args)) => grantry_bridge::program::main(*args),
        Some(Command::Events(command)) => events::run(command),
        Some(Command::Connections(command)) => admin::connections(command),
        Some(Command::Users(command)) => admin::users(command),
        Some(Command::Clients(command)) => admin::clients(command),
        None => grantry::program::serve(cli.serve, None),
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
    let opened = runtime.block_on(grantry::startup::open_stores(
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

pub(crate) use grantry::program::configure;
pub(crate) use grantry::providers::http::install_tls_provider;
