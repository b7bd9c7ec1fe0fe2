//! The versions a 2026-07-28 request names, in its header and in its `_meta`: they must agree,
//! the header must name a version at all, and `_meta`'s must be one grantry speaks.

use serde_json::json;

use crate::mcp::modern::meta::Meta;
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::describe::{SUPPORTED_VERSIONS, checks_routing};
use crate::mcp_wire::jsonrpc::{ErrorCode, RpcError};

/// The versions a `MCP-Protocol-Version` header may name at all.
pub(super) const KNOWN_VERSIONS: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// The version header and `_meta`'s agree, and the header names a version at all.
pub(super) fn agree(header: Option<&str>, meta: &Meta, method: &str) -> Result<(), RpcError> {
    let declared = meta.version.as_deref();
    if let Some(header) = header
        && !KNOWN_VERSIONS.contains(&header)
        && declared.is_none()
    {
        return Err(unsupported(header));
    }
    match (header, declared) {
        (_, None) if method == "server/discover" || checks_routing(header) => {
            let mut missing = vec!["io.modelcontextprotocol/protocolVersion"];
            if meta.capabilities.is_none() {
                missing.push("io.modelcontextprotocol/clientCapabilities");
            }
            Err(RpcError::invalid_params(format!(
                "Invalid params: request _meta is missing or has malformed required fields: {}",
                missing.join(", ")
            )))
        }
        (None, Some(_)) => Err(RpcError::new(
            ErrorCode::HEADER_MISMATCH,
            "request _meta protocolVersion requires MCP-Protocol-Version header",
        )),
        (Some(header), Some(meta)) if header != meta => Err(RpcError::new(
            ErrorCode::HEADER_MISMATCH,
            format!(
                "MCP-Protocol-Version header ({header}) does not match request _meta \
                 protocolVersion ({meta})"
            ),
        )),
        _ => Ok(()),
    }
}

/// The version `_meta` names is one grantry speaks, and the client declared its capabilities.
pub(super) fn supported(meta: &Meta) -> Result<Capabilities, RpcError> {
    if let Some(version) = meta.version.as_deref()
        && !SUPPORTED_VERSIONS.contains(&version)
    {
        return Err(unsupported(version));
    }
    meta.capabilities.ok_or_else(|| {
        RpcError::invalid_params(
            "request _meta is missing or has malformed required fields: \
             io.modelcontextprotocol/clientCapabilities",
        )
    })
}

/// `-32022`, naming the versions grantry speaks so the client can pick one.
pub(super) fn unsupported(requested: &str) -> RpcError {
    RpcError::new(
        ErrorCode::UNSUPPORTED_VERSION,
        "Unsupported protocol version",
    )
    .with_data(json!({"requested": requested, "supported": SUPPORTED_VERSIONS}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp_wire::describe::MODERN_VERSION;

    fn meta(version: Option<&str>) -> Meta {
        Meta {
            version: version.map(Into::into),
            capabilities: Some(Capabilities::default()),
            ..Meta::default()
        }
    }

    #[test]
    fn the_header_and_meta_must_name_one_known_version() {
        let modern = Some(MODERN_VERSION);
        assert_eq!(agree(modern, &meta(modern), "tools/list"), Ok(()));
        let code = |result: Result<(), RpcError>| result.unwrap_err().code;
        assert_eq!(
            code(agree(None, &meta(modern), "tools/list")),
            ErrorCode::HEADER_MISMATCH
        );
        assert_eq!(
            code(agree(modern, &meta(Some("2025-11-25")), "tools/list")),
            ErrorCode::HEADER_MISMATCH
        );
        assert_eq!(
            code(agree(modern, &meta(None), "tools/list")),
            ErrorCode::INVALID_PARAMS
        );
        assert_eq!(
            code(agree(Some("2099-01-01"), &meta(None), "tools/list")),
            ErrorCode::UNSUPPORTED_VERSION
        );
        assert_eq!(
            supported(&meta(Some("2099-01-01")))
                .unwrap_err()
                .data
                .unwrap()["supported"],
            json!(SUPPORTED_VERSIONS)
        );
        assert!(
            supported(&Meta::default()).is_err(),
            "no capabilities declared"
        );
    }
}
