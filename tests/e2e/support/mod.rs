//! Test support: the real grantry binary on a loopback port, an MCP client speaking raw
//! 2026-07-28 JSON over HTTP, and a scripted browser.

#[macro_use]
mod stores;
pub mod balancer;
pub mod browser;
pub mod dump;
pub mod fake_providers;
pub mod key_providers;
pub mod leaks;
pub mod legacy;
pub mod mcp;
pub mod oidc;
pub mod operator;
pub mod otlp;
pub mod person;
pub mod ports;
pub mod server;
pub mod webhooks;
pub use grantry_test_servers as servers;

pub use browser::Browser;
pub use mcp::Mcp;
pub use server::Server;

/// Waits, if need be, until at least `room` seconds of the current one-minute rate-limit
/// window are left, so that a handful of requests all count in one window.
pub async fn with_room_in_the_window(room: u64) {
    let second = std::time::UNIX_EPOCH.elapsed().unwrap().as_secs() % 60;
    if second + room > 60 {
        tokio::time::sleep(std::time::Duration::from_secs(61 - second)).await;
    }
}
