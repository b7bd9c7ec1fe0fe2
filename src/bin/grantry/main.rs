//! The `grantry` binary: parse the configuration, start logging, build the state, serve until
//! SIGINT or SIGTERM, then drain in-flight requests.

use std::process::ExitCode;

use grantry::config::{Cli, Command, Config, IdentityMode, KeysCommand, ServeArgs};
use grantry::store::StoreUrl;

mod events;
mod keys;
mod logging;

// glibc's malloc and free were about 12 % of a sign-in round's CPU under load (perf); mimalloc's
// per-thread free lists make the many small, short-lived allocations of a request cheaper.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::load();
    match cli.command {
        Some(Command::Keys(KeysCommand::Generate)) => {
            println!("{}", grantry::seal::generate_key());
            ExitCode::SUCCESS
        }
        Some(Command::Keys(KeysCommand::Status(args))) => keys::status(*args),
        Some(Command::Keys(KeysCommand::Rewrap(args))) => keys::rewrap(*args),
        Some(Command::Serve(args)) => serve(*args),
        Some(Command::Migrate(args)) => migrate(*args),
        Some(Command::Bridge(args)) => grantry_bridge::program::main(*args),
        Some(Command::Events(command)) => events::run(command),
        None => serve(cli.serve),
    }
}

/// The configuration these options give, or the exit of a refused one (status 2).
fn configure(args: ServeArgs) -> Result<Config, ExitCode> {
    Config::resolve(args).map_err(|e| {
        eprintln!("grantry: {e}");
        ExitCode::from(2)
    })
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
            println!("store {} is up to date", config.store);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("grantry: --store (GRANTRY_STORE): {e}");
            ExitCode::from(1)
        }
    }
}

pub(crate) use grantry::providers::http::install_tls_provider;

fn serve(args: ServeArgs) -> ExitCode {
    let config = match configure(args) {
        Ok(config) => config,
        Err(refused) => return refused,
    };
    logging::init(config.log_format);
    install_tls_provider();
    let runtime = tokio::runtime::Runtime::new().expect("the tokio runtime starts");
    match runtime.block_on(run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("grantry: {message}");
            ExitCode::from(1)
        }
    }
}

async fn run(config: Config) -> Result<(), String> {
    let listen = config.listen;
    let files = open_files();
    let state = grantry::startup::build(config)
        .await
        .map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("--listen (GRANTRY_LISTEN): cannot listen on {listen}: {e}"))?;
    let settings = grantry::server::Settings {
        limits: state.config.connections.clone(),
        max_connections: state
            .config
            .connections
            .max_connections
            .unwrap_or_else(|| grantry::server::default_max_connections(files)),
        trusted_proxies: state.config.limits.trusted_proxies.clone(),
    };
    if settings.max_connections as u64 > files.limit {
        tracing::warn!(
            max_connections = settings.max_connections,
            open_file_limit = files.limit,
            "--max-connections is above the open-file limit: accepting may fail before the cap"
        );
    }
    tracing::info!(
        mcp = %state.config.mcp_url(),
        demo = state.config.demo,
        store = %state.config.store,
        max_connections = settings.max_connections,
        max_connections_per_address = settings.limits.max_connections_per_address,
        "grantry is listening"
    );
    if state.config.demo && state.config.identity == IdentityMode::Oidc {
        tracing::warn!(
            "--demo is on with oidc identity: every user is offered \"Demo Billing\", whose \
             client secret is public; leave it off (the default) outside a trial"
        );
    }
    grantry::spawn_store_cleanup(state.clone());
    grantry::startup::spawn_lifecycle(&state);
    grantry::metrics::spawn_upkeep(state.metrics.clone());
    grantry::server::serve(listener, grantry::app(state), settings, shutdown_signal()).await;
    tracing::info!("grantry stopped");
    Ok(())
}

/// Raises the open-file limit as far as the hard limit allows, and says what it is.
fn open_files() -> grantry::server::OpenFiles {
    match grantry::server::raise_open_file_limit() {
        Ok(files) => {
            match files.raised_from {
                Some(before) => tracing::info!(
                    open_file_limit = files.limit,
                    raised_from = before,
                    "open-file limit raised to the hard limit"
                ),
                None => tracing::info!(open_file_limit = files.limit, "open-file limit"),
            }
            files
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot read or raise the open-file limit; assuming 1024");
            grantry::server::OpenFiles {
                limit: 1024,
                raised_from: None,
            }
        }
    }
}

async fn shutdown_signal() {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler installs");
        tokio::select! {
            _ = interrupt => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
    tracing::info!("shutting down: finishing in-flight requests");
}
