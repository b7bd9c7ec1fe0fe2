//! Test support: the real grantry binary on a loopback port, an MCP client speaking raw
//! 2026-07-28 JSON over HTTP, and a scripted browser.

pub mod balancer;
pub mod browser;
pub mod fake_providers;
pub mod leaks;
pub mod legacy;
pub mod mcp;
pub mod oidc;
pub mod server;
#[path = "../../common/servers.rs"]
pub mod servers;

pub use browser::Browser;
pub use mcp::Mcp;
pub use server::Server;
