//! The MCP headers grantry reads, as header names: a lookup by `&str` parses and lowercases
//! the name on every request.

use axum::http::HeaderName;

pub static MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
pub static MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
pub static MCP_PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub static MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
