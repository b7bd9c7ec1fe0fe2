//! grantry: a URL-mode OAuth connector for MCP.
pub mod demo;
pub mod seal;
