//! The spans of `/mcp` (only made when traces are on): one per request, named by its JSON-RPC
//! method and, for `tools/call`, its tool (as OpenTelemetry's MCP conventions name the server
//! span of a tool call: it is the tool call's span), continuing the caller's trace from
//! `_meta` or the headers.

use std::borrow::Cow;

use axum::body::Bytes;
use axum::http::request::Parts;
use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;

use crate::identity::Principal;
use crate::mcp_wire::headers::{MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION};
use crate::metrics::Outcome;
use crate::telemetry::Traced;
use crate::telemetry::propagate::{self, MetaContext};
use grantry_base::header_value;

/// What a span needs of a request's body: the method, a tool's name, `_meta`'s trace context
/// (borrowed where the JSON has no escapes; else the span goes without).
#[derive(Default, serde::Deserialize)]
struct Head<'a> {
    #[serde(default, borrow)]
    method: Option<&'a str>,
    #[serde(default, borrow)]
    params: Params<'a>,
}

#[derive(Default, serde::Deserialize)]
struct Params<'a> {
    #[serde(default, borrow)]
    name: Option<&'a str>,
    #[serde(rename = "_meta", default, borrow)]
    meta: Option<MetaContext<'a>>,
}

/// The span of one request to `/mcp` of this era, its parent the caller's context. Named by
/// its method among those grantry knows (else `other`) and, for `tools/call`, by the tool if
/// it is one of this server's: nothing a caller writes freely names a span.
///
/// From revision 2026-07-28 on, the routing headers (`Mcp-Method`, `Mcp-Name`) name it: the
/// revision requires them and refuses a body that says otherwise. The body is read a second
/// time only for a request of an earlier revision, whose headers nobody checks, or for
/// `_meta`'s trace context: that reading cost more than the span (BENCHMARKS.md, "Traces,
/// fourth pass").
pub(crate) fn request(
    parts: &Parts,
    body: &Bytes,
    known_tool: impl Fn(&str) -> bool,
) -> Option<Traced> {
    let (method, tool, meta) = called(parts, body);
    let method = crate::metrics::method_label(method);
    let tool = tool.filter(|name| method == "tools/call" && known_tool(name));
    let mut attributes = vec![KeyValue::new("mcp.method.name", method)];
    let name = match tool {
        Some(tool) => {
            let name = format!("{method} {tool}");
            attributes.push(KeyValue::new("gen_ai.tool.name", tool.into_owned()));
            name
        }
        None => method.to_owned(),
    };
    attributes.extend(who(parts));
    let parent = propagate::caller(meta.as_ref(), &parts.headers);
    Traced::start(name, SpanKind::Server, attributes, &parent)
}

/// The method and name a request calls, as the routing headers give them where this
/// revision checks them, else as its body does; `_meta`'s trace context, if the body names one.
fn called<'a>(
    parts: &'a Parts,
    body: &'a [u8],
) -> (
    Option<&'a str>,
    Option<Cow<'a, str>>,
    Option<MetaContext<'a>>,
) {
    let header = |name| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let checked = crate::mcp_wire::describe::checks_routing(header(&MCP_PROTOCOL_VERSION));
    let traced = memchr::memmem::find(body, b"traceparent").is_some();
    let head: Head<'_> = if checked && !traced {
        Head::default()
    } else {
        // A body that is not JSON-RPC (a refusal to come) still gets its span.
        serde_json::from_slice(body).unwrap_or_default()
    };
    let meta = head.params.meta;
    if checked {
        let name = header(&MCP_NAME).and_then(|name| header_value::decode(name).ok());
        (header(&MCP_METHOD), name, meta)
    } else {
        (head.method, head.params.name.map(Cow::Borrowed), meta)
    }
}

/// The span of a legacy-era (2025-11-25) `tools/call`, made where rmcp hands the call over
/// (the session's requests have no span of their own): the caller's context from its
/// headers.
pub(crate) fn legacy_call(parts: Option<&Parts>, tool: &str) -> Option<Traced> {
    if !crate::telemetry::enabled() {
        return None;
    }
    let mut attributes = vec![
        KeyValue::new("mcp.method.name", "tools/call"),
        KeyValue::new("gen_ai.tool.name", tool.to_owned()),
    ];
    let parent = match parts {
        Some(parts) => {
            attributes.extend(who(parts));
            propagate::caller(None, &parts.headers)
        }
        None => Default::default(),
    };
    Traced::start(
        format!("tools/call {tool}"),
        SpanKind::Server,
        attributes,
        &parent,
    )
}

/// The caller, as the hashed tag the audit lines use.
fn who(parts: &Parts) -> Option<KeyValue> {
    let principal = parts.extensions.get::<Principal>()?;
    Some(KeyValue::new(
        "enduser.pseudo.id",
        principal.tag().to_string(),
    ))
}

/// Records how the request ended: its status and outcome.
pub(crate) fn answered(span: &Traced, status: u16, outcome: Outcome) {
    span.set(KeyValue::new(
        "http.response.status_code",
        i64::from(status),
    ));
    span.set(KeyValue::new("grantry.outcome", outcome.label()));
    if status >= 500 {
        span.failed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(version: &str) -> Parts {
        let request = axum::http::Request::builder()
            .header("mcp-protocol-version", version)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "list_invoices")
            .body(())
            .unwrap();
        request.into_parts().0
    }

    const BODY: &[u8] =
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"void_invoice"}}"#;

    #[test]
    fn checked_routing_headers_name_the_call_and_unchecked_ones_do_not() {
        let modern = parts("2026-07-28");
        let (method, tool, meta) = called(&modern, BODY);
        assert_eq!(
            (method, tool.as_deref()),
            (Some("tools/call"), Some("list_invoices"))
        );
        assert!(meta.is_none());
        // An earlier revision's headers are not checked against the body: the body names it.
        let earlier = parts("2025-11-25");
        let (method, tool, _) = called(&earlier, BODY);
        assert_eq!(
            (method, tool.as_deref()),
            (Some("tools/list"), Some("void_invoice"))
        );
    }

    #[test]
    fn the_body_is_read_for_a_trace_context_in_meta() {
        let body = br#"{"method":"tools/call","params":{"_meta":{"traceparent":"00-ab-cd-01"}}}"#;
        let modern = parts("2026-07-28");
        let (_, _, meta) = called(&modern, body);
        assert_eq!(meta.and_then(|m| m.traceparent), Some("00-ab-cd-01"));
    }
}
