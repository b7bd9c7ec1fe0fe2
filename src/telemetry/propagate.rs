//! W3C trace context in and out: the caller's `traceparent`/`tracestate`, from the MCP
//! request's `_meta` (the MCP convention) or its HTTP headers, become a span's parent; a
//! span's context goes out in the headers of a request grantry makes.

use std::collections::HashMap;

use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_http::{HeaderExtractor, HeaderInjector};
use opentelemetry_sdk::propagation::TraceContextPropagator;

/// The trace context a request carries in `_meta`.
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub struct MetaContext<'a> {
    #[serde(default, borrow)]
    pub traceparent: Option<&'a str>,
    #[serde(default, borrow)]
    pub tracestate: Option<&'a str>,
}

/// The caller's trace, to continue: `_meta`'s context if it has a valid one, else the
/// headers'; an empty context (a trace of its own) with neither.
pub fn caller(meta: Option<&MetaContext<'_>>, headers: &http::HeaderMap) -> Context {
    let propagator = TraceContextPropagator::new();
    let from_meta = meta.and_then(|m| {
        let mut carrier = HashMap::from([("traceparent".to_owned(), String::from(m.traceparent?))]);
        if let Some(state) = m.tracestate {
            carrier.insert("tracestate".to_owned(), String::from(state));
        }
        Some(propagator.extract(&carrier))
    });
    let parent = from_meta
        .filter(has_span)
        .unwrap_or_else(|| propagator.extract(&HeaderExtractor(headers)));
    if has_span(&parent) {
        parent
    } else {
        Context::new()
    }
}

fn has_span(cx: &Context) -> bool {
    cx.span().span_context().is_valid()
}

/// Puts `cx`'s span context in `headers` (`traceparent`, `tracestate`), for the one it calls.
pub fn inject(cx: &Context, headers: &mut http::HeaderMap) {
    TraceContextPropagator::new().inject_context(cx, &mut HeaderInjector(headers));
}
