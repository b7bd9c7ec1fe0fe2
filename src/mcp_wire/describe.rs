//! What grantry says of itself on `/mcp`: the versions it speaks, its name, its discovery
//! result and the `initialize` answer of a legacy session, the lists' cache lifetime, and
//! the largest request it reads.

use serde_json::{Value, json};

/// The protocol versions grantry speaks: the modern era, and the legacy one for clients that
/// start with `initialize`.
pub(crate) const SUPPORTED_VERSIONS: [&str; 2] = [MODERN_VERSION, LEGACY_VERSION];

/// The modern revision, as its `MCP-Protocol-Version` header and `_meta` spell it.
pub(crate) const MODERN_VERSION: &str = "2026-07-28";
/// The legacy revision, which `initialize` opens a session of.
pub(crate) const LEGACY_VERSION: &str = "2025-11-25";

/// Largest request body accepted on `/mcp` (larger gets 413 before any parsing).
pub(crate) const MAX_REQUEST_BYTES: usize = 256 * 1024;

/// How long clients may cache discovery and the tool list (they do not vary per user).
pub(crate) const LIST_TTL_MS: u64 = 5 * 60 * 1000;

const INSTRUCTIONS: &str = "Tools over the user's connected billing account. When an account \
    is not connected yet, the user is asked to open a sign-in link first; where a tool says to \
    call connect_account, call it and wait for the user to connect.";

fn server_info() -> Value {
    json!({"name": "grantry", "version": env!("CARGO_PKG_VERSION")})
}

/// The MCP Apps extension's id, as capabilities name it (grantry's connect card is one).
pub(crate) const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The MIME type of an app's HTML, which a host declares it renders.
pub(crate) const APP_MIME: &str = "text/html;profile=mcp-app";

/// The Tasks extension's id (2026-07-28 era only: the legacy era's experimental tasks are
/// another wire format).
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// What grantry offers: tools, the resource its connect card is, and the MCP Apps extension.
fn capabilities() -> Value {
    json!({"tools": {}, "resources": {}, "extensions": {APPS_EXTENSION: {}}})
}

/// What grantry offers in the 2026-07-28 era: the same, and the Tasks extension.
fn modern_capabilities() -> Value {
    json!({"tools": {}, "resources": {}, "extensions": {APPS_EXTENSION: {}, TASKS_EXTENSION: {}}})
}

/// The `server/discover` result: the same for every caller.
pub(crate) fn discovery() -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": SUPPORTED_VERSIONS,
        "capabilities": modern_capabilities(),
        "instructions": INSTRUCTIONS,
        "ttlMs": LIST_TTL_MS,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
    })
}

/// Whether a request of `version` (its `MCP-Protocol-Version`) is of revision 2026-07-28 or a
/// later one, whose routing headers are checked against its body.
pub(crate) fn checks_routing(version: Option<&str>) -> bool {
    version.is_some_and(|v| v >= MODERN_VERSION)
}

/// What `initialize` answers a legacy session with.
pub(crate) fn server_description() -> Value {
    json!({
        "protocolVersion": MODERN_VERSION,
        "capabilities": capabilities(),
        "serverInfo": server_info(),
        "instructions": INSTRUCTIONS,
    })
}
