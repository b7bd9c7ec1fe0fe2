//! The MCP headers grantry reads, as header names: a lookup by `&str` parses and lowercases
//! the name on every request.

use axum::http::HeaderName;

pub(crate) static MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
pub(crate) static MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");
pub(crate) static MCP_PROTOCOL_VERSION: HeaderName =
    HeaderName::from_static("mcp-protocol-version");
pub(crate) static MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");
