//! The program around the library: settings resolved (or refused with status 2), logs on
//! stderr, the state built, the listener serving until SIGINT or SIGTERM, then in-flight
//! requests drained. The `grantry` binary and the conformance build both run it.

pub mod commands;
mod logging;

use std::process::ExitCode;

use crate::config::{Config, IdentityMode, ServeArgs};
use crate::mcp_calls::extension::Extension;
use crate::providers::http::install_tls_provider;
use crate::telemetry::Traces;

/// The configuration these options give, or the exit of a refused one (status 2).
pub(crate) fn configure(args: ServeArgs) -> Result<Config, ExitCode> {
    Config::resolve(args).map_err(|e| {
        eprintln!("grantry: {e}");
        ExitCode::from(2)
    })
}

/// Starts logging to stderr as `serve` does (for the operators' commands: their warnings and
/// audit lines).
pub(crate) fn start_logging(format: crate::config::LogFormat) {
    logging::init(format);
}

/// `grantry serve` with the options of this process's command line (no subcommand), and the
/// tools `extension` adds: the conformance build's `main`.
pub fn serve_from_command_line(extension: Extension) -> ExitCode {
    serve(crate::config::Cli::load().serve, extension)
}

/// `grantry serve`: resolves the settings, starts logging, builds the state and serves
/// grantry's routes (with the tools `extension` adds) until SIGINT or SIGTERM.
pub(crate) fn serve(args: ServeArgs, extension: Extension) -> ExitCode {
    let config = match configure(args) {
        Ok(config) => config,
        Err(refused) => return refused,
    };
    install_tls_provider();
    let traces = match config.traces.as_ref().map(Traces::start).transpose() {
        Ok(traces) => traces,
        Err(message) => {
            eprintln!("grantry: {message}");
            return ExitCode::from(2);
        }
    };
    logging::init(config.log_format);
    let runtime = tokio::runtime::Runtime::new().expect("the tokio runtime starts");
    let served = runtime.block_on(run(config, extension));
    if let Some(traces) = traces {
        traces.shutdown();
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            tracing::error!("{message}");
            eprintln!("grantry: {message}");
            ExitCode::from(1)
        }
    }
}

async fn run(config: Config, extension: Extension) -> Result<(), String> {
    let listen = config.listen;
    let files = open_files();
    let state = crate::startup::build(config)
        .await
        .map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("--listen (GRANTRY_LISTEN): cannot listen on {listen}: {e}"))?;
    let listening = listener.local_addr().unwrap_or(listen);
    let membership = crate::startup::join_replicas(&state, listening)
        .await
        .map_err(|e| e.to_string())?;
    let settings = server_settings(&state.config, files);
    tracing::info!(
        listen = %listening,
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
    crate::spawn_store_cleanup(state.clone());
    crate::startup::spawn_lifecycle(&state);
    crate::metrics::spawn_upkeep(state.metrics.clone());
    // At the signal this replica leaves the others at once: it serves no new request, and a
    // replica started in its place need not wait for it to drain.
    let leaving = async move {
        shutdown_signal().await;
        membership.leave().await;
    };
    crate::server::serve(listener, crate::app(state, extension), settings, leaving).await;
    tracing::info!("grantry stopped");
    Ok(())
}

/// The listener's settings: connection caps (by default within the open-file limit).
fn server_settings(config: &Config, files: crate::server::OpenFiles) -> crate::server::Settings {
    let settings = crate::server::Settings {
        limits: config.connections.clone(),
        max_connections: config
            .connections
            .max_connections
            .unwrap_or_else(|| crate::server::default_max_connections(files)),
        trusted_proxies: config.limits.trusted_proxies.clone(),
    };
    if settings.max_connections as u64 > files.limit {
        tracing::warn!(
            max_connections = settings.max_connections,
            open_file_limit = files.limit,
            "--max-connections is above the open-file limit: accepting may fail before the cap"
        );
    }
    settings
}

/// Raises the open-file limit as far as the hard limit allows, and says what it is.
fn open_files() -> crate::server::OpenFiles {
    match crate::server::raise_open_file_limit() {
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
            crate::server::OpenFiles {
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
