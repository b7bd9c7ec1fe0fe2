//! `grantry-bridge URL [OPTIONS]`: the bridge alone, without the server.

use std::process::ExitCode;

use clap::Parser;
use grantry_bridge::BridgeArgs;

/// A local stdio MCP server for clients that cannot finish a sign-in by themselves: it speaks
/// to a remote MCP server (grantry or another) on the client's behalf, opens sign-in links in
/// the browser and holds each call until the sign-in lands.
#[derive(Parser)]
#[command(name = "grantry-bridge", version)]
struct Cli {
    #[command(flatten)]
    bridge: BridgeArgs,
}

fn main() -> ExitCode {
    grantry_bridge::program::main(Cli::parse().bridge)
}
