//! W3C trace context in and out: the caller's `traceparent`/`tracestate`, from the MCP
//! request's `_meta` (the MCP convention) or its HTTP headers, become a span's parent; a
//! span's `traceparent` goes out in the headers of a request grantry makes.

use std::collections::HashMap;

use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{SpanContext, TraceContextExt, TraceFlags, TraceState};
use opentelemetry_http::HeaderExtractor;
#[cfg(test)]
use opentelemetry_http::HeaderInjector;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use reqwest::header::HeaderValue;

/// The trace context a request carries in `_meta`.
#[derive(Debug, Default, Clone, serde::Deserialize)]
pub(crate) struct MetaContext<'a> {
    #[serde(default, borrow)]
    pub(crate) traceparent: Option<&'a str>,
    #[serde(default, borrow)]
    pub(crate) tracestate: Option<&'a str>,
}

/// The caller's trace, to continue: `_meta`'s context if it has a valid one, else the
/// headers'; an empty context (a trace of its own) with neither.
pub(crate) fn caller(meta: Option<&MetaContext<'_>>, headers: &http::HeaderMap) -> Context {
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
        with_bounded_state(parent)
    } else {
        Context::new()
    }
}

/// How long a caller's `tracestate` may be as grantry keeps it: the W3C Trace Context's
/// floor for what a vendor propagates. It rides on every span of the request, and on to the
/// collector: a caller must not make every span kilobytes larger.
const MAX_TRACE_STATE: usize = 512;
/// Members longer than this go first when a `tracestate` is cut (W3C Trace Context).
const LONG_MEMBER: usize = 128;

/// `cx` with its remote span's `tracestate` cut to [`MAX_TRACE_STATE`] as the W3C Trace
/// Context says to cut one: members over [`LONG_MEMBER`] characters first, then from the
/// end.
fn with_bounded_state(cx: Context) -> Context {
    let span = cx.span().span_context().clone();
    let header = span.trace_state().header();
    if header.len() <= MAX_TRACE_STATE {
        return cx;
    }
    let mut kept = Vec::new();
    let mut length = 0;
    for member in header.split(',').filter(|m| m.len() <= LONG_MEMBER) {
        let added = member.len() + usize::from(!kept.is_empty());
        if length + added > MAX_TRACE_STATE {
            break;
        }
        length += added;
        kept.extend(member.split_once('='));
    }
    let state = TraceState::from_key_value(kept).unwrap_or_default();
    let bounded = SpanContext::new(
        span.trace_id(),
        span.span_id(),
        span.trace_flags(),
        true,
        state,
    );
    Context::new().with_remote_span_context(bounded)
}

fn has_span(cx: &Context) -> bool {
    cx.span().span_context().is_valid()
}

/// The W3C `traceparent` of `cx`'s span (`00-{trace}-{span}-{flags}`), for a request grantry
/// makes; `None` without a valid span. Written here rather than by the SDK's propagator,
/// which formats each part through `fmt` (4 k instructions a provider call) and adds a
/// `tracestate` grantry does not pass on.
pub(crate) fn traceparent(cx: &Context) -> Option<HeaderValue> {
    let span = cx.span();
    let context = span.span_context();
    if !context.is_valid() {
        return None;
    }
    let flags = context.trace_flags() & TraceFlags::SAMPLED;
    let mut text = *b"00-00000000000000000000000000000000-0000000000000000-00";
    hex::encode_to_slice(context.trace_id().to_bytes(), &mut text[3..35]).ok()?;
    hex::encode_to_slice(context.span_id().to_bytes(), &mut text[36..52]).ok()?;
    hex::encode_to_slice([flags.to_u8()], &mut text[53..55]).ok()?;
    HeaderValue::from_bytes(&text).ok()
}

#[cfg(test)]
mod tests {
    use opentelemetry::propagation::TextMapPropagator;
    use opentelemetry::trace::{SpanId, TraceId};

    use super::*;

    fn with_span(trace: u128, span: u64, flags: TraceFlags) -> Context {
        let state = TraceState::from_key_value([("vendor", "x")]).unwrap();
        let remote = SpanContext::new(TraceId::from(trace), SpanId::from(span), flags, true, state);
        Context::new().with_remote_span_context(remote)
    }

    #[test]
    fn a_long_tracestate_is_cut_as_the_w3c_says_and_a_short_one_kept() {
        let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        let state_of = |state: &str| {
            let meta = MetaContext {
                traceparent: Some(parent),
                tracestate: Some(state),
            };
            caller(Some(&meta), &http::HeaderMap::new())
                .span()
                .span_context()
                .trace_state()
                .header()
        };
        assert_eq!(state_of("a=1,b=2"), "a=1,b=2");
        let long = format!("long={}", "x".repeat(200));
        let members: Vec<String> = (0..32)
            .map(|n| format!("v{n:02}={}", "y".repeat(40)))
            .collect();
        let sent = format!("{long},{}", members.join(","));
        assert!(sent.len() > 1500);
        let kept = state_of(&sent);
        assert!(kept.len() <= MAX_TRACE_STATE, "{} characters", kept.len());
        assert!(!kept.contains("long="), "the long member goes first");
        assert!(kept.starts_with("v00="), "then from the end: {kept}");
        let expected: Vec<&str> = members.iter().map(String::as_str).take(11).collect();
        assert_eq!(kept, expected.join(","));
    }

    #[test]
    fn the_traceparent_is_the_one_the_sdks_propagator_writes() {
        for (trace, span, flags) in [
            (1, 2, TraceFlags::SAMPLED),
            (u128::MAX, u64::MAX, TraceFlags::NOT_SAMPLED),
            (
                0x0af7_6519_16cd_43dd_8448_eb21_1c80_319c,
                0xb7ad_6b71_6920_3331,
                TraceFlags::new(0xff),
            ),
        ] {
            let cx = with_span(trace, span, flags);
            let mut headers = http::HeaderMap::new();
            TraceContextPropagator::new().inject_context(&cx, &mut HeaderInjector(&mut headers));
            assert_eq!(traceparent(&cx).as_ref(), headers.get("traceparent"));
        }
        assert_eq!(traceparent(&Context::new()), None);
    }
}
