//! The spans of `/mcp` (only made when traces are on): one per request, named by its JSON-RPC
//! method and, for `tools/call`, its tool (as OpenTelemetry's MCP conventions name the server
//! span of a tool call: it is the tool call's span), continuing the caller's trace from
//! `_meta` or the headers.

use axum::body::Bytes;
use axum::http::request::Parts;
use tracing::field::Empty;

use crate::identity::Principal;
use crate::metrics::Outcome;
use crate::telemetry::propagate::{self, MetaContext};

/// What a span needs of a request's body: the method, a tool's name, `_meta`'s context
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
pub(super) fn request(
    parts: &Parts,
    body: &Bytes,
    known_tool: impl Fn(&str) -> bool,
) -> tracing::Span {
    // A body that is not JSON-RPC (a refusal to come) still gets its span.
    let head: Head<'_> = serde_json::from_slice(body).unwrap_or_default();
    let method = crate::metrics::method_label(head.method);
    let tool = head
        .params
        .name
        .filter(|name| method == "tools/call" && known_tool(name));
    let who = parts.extensions.get::<Principal>().map(Principal::tag);
    let span = tracing::info_span!(
        target: "grantry::spans",
        "mcp",
        otel.name = %match tool {
            Some(tool) => format!("{method} {tool}"),
            None => method.to_owned(),
        },
        otel.kind = "server",
        mcp.method.name = method,
        gen_ai.tool.name = tool,
        enduser.pseudo.id = who,
        http.response.status_code = Empty,
        grantry.outcome = Empty,
        otel.status_code = Empty,
    );
    propagate::continue_trace(&span, head.params.meta.as_ref(), &parts.headers);
    span
}

/// The span of a legacy-era (2025-11-25) `tools/call`, made where rmcp hands the call over
/// (the session's requests have no span of their own): the caller's context from its
/// headers.
pub(super) fn legacy_call(parts: Option<&Parts>, tool: &str) -> tracing::Span {
    let who = parts
        .and_then(|p| p.extensions.get::<Principal>())
        .map(Principal::tag);
    let span = tracing::info_span!(
        target: "grantry::spans",
        "mcp",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "server",
        mcp.method.name = "tools/call",
        gen_ai.tool.name = tool,
        enduser.pseudo.id = who,
    );
    if let Some(parts) = parts {
        propagate::continue_trace(&span, None, &parts.headers);
    }
    span
}

/// Records how the request ended: its status and outcome.
pub(super) fn answered(span: &tracing::Span, status: u16, outcome: Outcome) {
    span.record("http.response.status_code", i64::from(status));
    span.record("grantry.outcome", outcome.label());
    if status >= 500 {
        span.record("otel.status_code", "ERROR");
    }
}
