//! The program around the bridge, shared by `grantry-bridge` and `grantry bridge`: logs on
//! stderr (stdout carries the MCP stream), the TLS provider, a runtime, an exit status.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use tracing_subscriber::EnvFilter;

use crate::BridgeArgs;

/// Runs the bridge until stdin closes: status 0, or 1 with the reason on stderr.
pub fn main(args: BridgeArgs) -> ExitCode {
    init_logging();
    grantry_base::net::install_tls_provider();
    let runtime = tokio::runtime::Runtime::new().expect("the tokio runtime starts");
    match runtime.block_on(crate::run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("grantry bridge: {e}");
            ExitCode::from(1)
        }
    }
}

/// Text on stderr, filtered by `GRANTRY_LOG` (or `RUST_LOG`); colours only on a terminal.
fn init_logging() {
    let filter = EnvFilter::try_from_env("GRANTRY_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}
