//! The MCP wire both eras share: JSON-RPC messages and errors ([`jsonrpc`]), what a body
//! that is not one gets ([`malformed`]), the header names ([`headers`]), what grantry says of
//! itself ([`describe`]: versions, discovery, the largest request it reads), what a client
//! declares it can do ([`capabilities`]), the notifications a call sends on its answer stream
//! ([`notify`]) and the trace spans of a request ([`spans`]).
//!
//! The lowest of the MCP rooms: the endpoint ([`crate::mcp`]), the legacy era
//! ([`crate::mcp_legacy`]) and the calls ([`crate::mcp_calls`]) stand on it; it names none of
//! them.

pub(crate) mod capabilities;
pub(crate) mod describe;
pub(crate) mod headers;
pub(crate) mod jsonrpc;
pub(crate) mod malformed;
pub(crate) mod notify;
pub(crate) mod spans;
