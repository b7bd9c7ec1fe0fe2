//! The headers of a 2026-07-28 request: what the transport requires of every POST (`Accept`,
//! `Content-Type`), and the routing headers that must agree with the body
//! (`Mcp-Method`, `Mcp-Name`, an argument a tool mirrors into `Mcp-Param-*`). Each refusal's
//! words are those rmcp gave before grantry answered this era itself, so no client sees a
//! change.

use axum::http::header::{ACCEPT, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName};
use serde_json::{Map, Value};

use crate::mcp_calls::registry::Mirror;
use crate::mcp_wire::headers::{MCP_METHOD, MCP_NAME};
use grantry_base::header_value;

/// `Accept` lists both `application/json` and `text/event-stream` (any case, parameters
/// allowed, across every `Accept` header); a range weighted `q=0` is refused, and wildcards
/// do not count.
pub(super) fn accepts_json_and_sse(headers: &HeaderMap) -> bool {
    let mut values = headers.get_all(ACCEPT).iter();
    // The form every SDK sends, without reading it apart.
    if let (Some(only), None) = (values.next(), values.next())
        && only.as_bytes() == b"application/json, text/event-stream"
    {
        return true;
    }
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(ACCEPT) {
        let Ok(value) = value.to_str() else {
            continue;
        };
        for range in outside_quotes(value, ',') {
            let mut parts = outside_quotes(range, ';');
            let essence = parts.next().unwrap_or_default().trim();
            let refused = parts.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            if refused {
                continue;
            }
            json |= essence.eq_ignore_ascii_case("application/json");
            sse |= essence.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// The parts of `text` between `separator`s that are not inside quotes.
fn outside_quotes(text: &str, separator: char) -> impl Iterator<Item = &str> {
    let mut quoted = false;
    text.split(move |c: char| {
        if c == '"' {
            quoted = !quoted;
        }
        c == separator && !quoted
    })
}

/// The first `Content-Type` is JSON (`application/json`, any case, parameters allowed).
pub(super) fn sends_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// What the body says that the routing headers must repeat.
pub(super) struct Routed<'a> {
    pub(crate) method: &'a str,
    /// `params.name` (or the URI, or the task id) where the method has one and it is a string.
    pub(crate) name: Option<&'a str>,
    /// The arguments the tool mirrors, and the call's arguments (for `tools/call` of a
    /// listed tool).
    pub(crate) mirrors: &'a [Mirror],
    pub(crate) arguments: Option<&'a Map<String, Value>>,
}

/// Checks the routing headers against the body; the refusal's words otherwise.
pub(super) fn check_routing(headers: &HeaderMap, routed: &Routed<'_>) -> Result<(), String> {
    let method = single(headers, &MCP_METHOD, "Mcp-Method")?
        .ok_or_else(|| "missing required Mcp-Method header".to_owned())?;
    if method != routed.method {
        return Err(format!(
            "Mcp-Method header `{method}` does not match body method `{}`",
            routed.method
        ));
    }
    if let Some(expected) = routed.name {
        let name = single(headers, &MCP_NAME, "Mcp-Name")?
            .ok_or_else(|| format!("missing required Mcp-Name header for `{}`", routed.method))?;
        let name = header_value::decode(name)
            .map_err(|_| "Mcp-Name header is not valid Base64".to_owned())?;
        if name != expected {
            return Err(format!(
                "Mcp-Name header `{name}` does not match body value `{expected}`"
            ));
        }
    }
    for mirror in routed.mirrors {
        check_mirror(headers, mirror, routed.arguments)?;
    }
    Ok(())
}

/// One mirrored argument: its header present exactly when the argument is, and equal to it.
fn check_mirror(
    headers: &HeaderMap,
    mirror: &Mirror,
    arguments: Option<&Map<String, Value>>,
) -> Result<(), String> {
    let spelled = &mirror.spelled;
    let header = match &mirror.name {
        Some(name) => single(headers, name, spelled)?,
        None => None, // a name no client can send
    };
    let argument = &mirror.argument;
    let body = arguments
        .and_then(|a| a.get(argument))
        .and_then(primitive_text);
    match (header, body) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(format!(
            "unexpected {spelled} header for absent or null `{argument}`"
        )),
        (None, Some(_)) => Err(format!("missing {spelled} header for `{argument}`")),
        (Some(header), Some(expected)) => {
            let value = header_value::decode(header)
                .map_err(|_| format!("{spelled} header is not valid Base64"))?;
            if value == expected {
                Ok(())
            } else {
                Err(format!(
                    "{spelled} header `{value}` does not match body value `{expected}`"
                ))
            }
        }
    }
}

/// An argument as its header carries it: a string as it is, a boolean or number as JSON
/// writes it; anything else is not mirrored.
fn primitive_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The one value of header `name`, spelled `spelled` in refusals.
fn single<'h>(
    headers: &'h HeaderMap,
    name: &HeaderName,
    spelled: &str,
) -> Result<Option<&'h str>, String> {
    let mut values = headers.get_all(name).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(format!("duplicate {spelled} header"));
    }
    value
        .to_str()
        .map(Some)
        .map_err(|_| format!("{spelled} header contains invalid characters"))
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use serde_json::json;

    use super::*;

    fn with(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn accept_must_name_both_types_and_may_weigh_them() {
        let accepts = |v: &str| accepts_json_and_sse(&with(&[("accept", v)]));
        assert!(accepts("application/json, text/event-stream"));
        assert!(accepts("Application/JSON;q=0.9, text/event-stream"));
        assert!(!accepts("application/json"));
        assert!(!accepts("*/*"));
        assert!(!accepts("application/json, text/event-stream;q=0"));
        assert!(accepts_json_and_sse(&with(&[
            ("accept", "application/json"),
            ("accept", "text/event-stream")
        ])));
    }

    #[test]
    fn the_body_must_be_said_to_be_json() {
        assert!(sends_json(&with(&[("content-type", "application/json")])));
        assert!(sends_json(&with(&[(
            "content-type",
            "Application/JSON ; charset=utf-8"
        )])));
        assert!(!sends_json(&with(&[(
            "content-type",
            "application/json-rpc"
        )])));
        assert!(!sends_json(&HeaderMap::new()));
    }

    #[test]
    fn routing_headers_must_repeat_the_body() {
        let mirrors = [Mirror::new("provider", "Provider")];
        let arguments = json!({"provider": "demo"});
        let routed = Routed {
            method: "tools/call",
            name: Some("list_invoices"),
            mirrors: &mirrors,
            arguments: arguments.as_object(),
        };
        let check = |pairs: &[(&'static str, &str)]| check_routing(&with(pairs), &routed);
        let good = [
            ("mcp-method", "tools/call"),
            ("mcp-name", "list_invoices"),
            ("mcp-param-provider", "demo"),
        ];
        assert_eq!(check(&good), Ok(()));
        assert_eq!(
            check(&[
                ("mcp-method", "tools/call"),
                ("mcp-name", "=?base64?bGlzdF9pbnZvaWNlcw==?="),
                ("mcp-param-provider", "=?base64?ZGVtbw==?=")
            ]),
            Ok(())
        );
        assert_eq!(
            check(&good[1..]),
            Err("missing required Mcp-Method header".into())
        );
        assert_eq!(
            check(&[good[0], good[1]]),
            Err("missing Mcp-Param-Provider header for `provider`".into())
        );
        assert_eq!(
            check(&[good[0], good[1], ("mcp-param-provider", "xero")]),
            Err("Mcp-Param-Provider header `xero` does not match body value `demo`".into())
        );
        assert_eq!(
            check(&[good[0], good[0], good[1]]),
            Err("duplicate Mcp-Method header".into())
        );
    }
}
