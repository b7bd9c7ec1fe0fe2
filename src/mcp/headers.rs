//! The MCP headers grantry reads, as header names: a lookup by `&str` parses and lowercases
//! the name on every request.

use axum::http::HeaderName;

pub(super) static MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
pub(super) static MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
pub(super) static MCP_PROTOCOL_VERSION: HeaderName =
    HeaderName::from_static("mcp-protocol-version");
pub(super) static MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
