//! The headers of a 2026-07-28 POST: the routing headers (`Mcp-Method`, `Mcp-Name`), the
//! arguments a tool mirrors into `Mcp-Param-*` (see [`super::mirrors`]), values outside
//! visible ASCII base64-wrapped.

use http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::mirrors::Mirrors;
use super::profile::MODERN;

/// `base` (the `--header`s) with this revision's headers for `method` and `params`.
pub(super) fn for_request(
    base: &HeaderMap,
    mirrors: &Mirrors,
    method: &str,
    params: &Value,
) -> HeaderMap {
    let mut headers = base.clone();
    let fixed = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", MODERN),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    insert_encoded(&mut headers, HeaderName::from_static("mcp-method"), method);
    let name = match method {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" => params["uri"].as_str(),
        _ => None,
    };
    if let Some(name) = name {
        insert_encoded(&mut headers, HeaderName::from_static("mcp-name"), name);
    }
    if method == "tools/call" {
        mirror_arguments(&mut headers, mirrors, params);
    }
    headers
}

fn mirror_arguments(headers: &mut HeaderMap, mirrors: &Mirrors, params: &Value) {
    let tool = params["name"].as_str().unwrap_or_default();
    for mirror in mirrors.of(tool).unwrap_or_default() {
        let value = match &params["arguments"][&mirror.argument] {
            Value::Null => continue,
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        insert_encoded(headers, mirror.header, &value);
    }
}

/// Sets a header, base64-wrapped (`=?base64?…?=`) when the value is not plain visible ASCII.
fn insert_encoded(headers: &mut HeaderMap, name: HeaderName, value: &str) {
    if let Ok(value) = HeaderValue::from_str(&grantry_base::header_value::encode(value)) {
        headers.insert(name, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_values_outside_visible_ascii_are_base64_wrapped() {
        let mut headers = HeaderMap::new();
        let name = HeaderName::from_static("mcp-param-provider");
        insert_encoded(&mut headers, name.clone(), "xero");
        assert_eq!(headers[&name], "xero");
        insert_encoded(&mut headers, name.clone(), "Zürich");
        assert_eq!(headers[&name], "=?base64?WsO8cmljaA==?=");
        insert_encoded(&mut headers, name.clone(), " padded");
        assert_eq!(headers[&name], "=?base64?IHBhZGRlZA==?=");
    }

    #[test]
    fn a_tools_x_mcp_header_arguments_are_mirrored_once_listed() {
        let mirrors = Mirrors::default();
        assert!(!mirrors.known());
        mirrors.learn(
            &mut json!({"tools": [{"name": "list_invoices", "inputSchema": {"properties": {
                "provider": {"type": "string", "x-mcp-header": "Provider"},
                "status": {"type": "string"},
            }}}]}),
        );
        assert!(mirrors.known());
        let call =
            json!({"name": "list_invoices", "arguments": {"provider": "xero", "status": "all"}});
        let headers = for_request(&HeaderMap::new(), &mirrors, "tools/call", &call);
        assert_eq!(headers["mcp-param-provider"], "xero");
        assert_eq!(headers["mcp-name"], "list_invoices");
        assert!(
            !headers
                .keys()
                .any(|name| name.as_str() == "mcp-param-status")
        );
    }
}
