//! A batch of finished spans as an OTLP `ExportTraceServiceRequest` in protobuf, written
//! straight from the SDK's span data.
//!
//! `opentelemetry-otlp` first copies every span into `opentelemetry-proto`'s message structs
//! (a `String` per attribute key and value) and then lets `prost` encode them, which sizes
//! each nested message again at every level above it: together 27 k instructions for a
//! request's three spans, more than making the spans. Here each message is written once and
//! its length put in front of it when it is done. The bytes decode to exactly what
//! `opentelemetry-proto`'s own conversion gives (the tests compare the two).

use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status};
use opentelemetry::{Array, InstrumentationScope, KeyValue, Value};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SpanData;

use super::protobuf::{FIXED64, Writer};

/// OTLP's `SpanFlags`: the span context says whether its parent is remote, and whether it is.
const HAS_IS_REMOTE: u32 = 0x100;
const IS_REMOTE: u32 = 0x200;

/// The resource's part of every request, written once ([`encoded_resource`]).
#[derive(Debug, Clone, Default)]
pub(super) struct EncodedResource {
    /// The `Resource` message's body.
    resource: Vec<u8>,
    schema_url: Option<String>,
}

/// Writes `resource` for the requests to come.
pub(super) fn encoded_resource(resource: &Resource) -> EncodedResource {
    let mut out = Writer::default();
    for (key, value) in resource.iter() {
        out.message(1, |out| key_value(out, key.as_str(), value));
    }
    EncodedResource {
        resource: out.into_bytes(),
        schema_url: resource.schema_url().map(str::to_owned),
    }
}

/// The request that exports `spans`, grouped by instrumentation scope in the order scopes
/// first appear.
pub(super) fn request(resource: &EncodedResource, spans: &[SpanData]) -> Vec<u8> {
    let mut out = Writer::with_capacity(256 * spans.len() + 64);
    out.message(1, |out| {
        out.message(1, |out| out.raw(&resource.resource));
        for scope in scopes(spans) {
            out.message(2, |out| scope_spans(out, scope, spans));
        }
        out.string(3, resource.schema_url.as_deref().unwrap_or_default());
    });
    out.into_bytes()
}

/// The distinct scopes of `spans`, in order (a process has one or a few).
fn scopes(spans: &[SpanData]) -> Vec<&InstrumentationScope> {
    let mut seen: Vec<&InstrumentationScope> = Vec::new();
    for span in spans {
        if !seen.contains(&&span.instrumentation_scope) {
            seen.push(&span.instrumentation_scope);
        }
    }
    seen
}

fn scope_spans(out: &mut Writer, scope: &InstrumentationScope, spans: &[SpanData]) {
    out.message(1, |out| {
        out.string(1, scope.name());
        out.string(2, scope.version().unwrap_or_default());
        attributes(out, 3, scope.attributes());
    });
    for span in spans.iter().filter(|s| s.instrumentation_scope == *scope) {
        out.message(2, |out| self::span(out, span));
    }
    out.string(3, scope.schema_url().unwrap_or_default());
}

fn span(out: &mut Writer, span: &SpanData) {
    let context = &span.span_context;
    out.bytes(1, &context.trace_id().to_bytes());
    out.bytes(2, &context.span_id().to_bytes());
    out.string(3, &context.trace_state().header());
    if span.parent_span_id != SpanId::INVALID {
        out.bytes(4, &span.parent_span_id.to_bytes());
    }
    out.string(5, &span.name);
    out.uint(6, kind(&span.span_kind));
    out.fixed64(7, nanos(span.start_time));
    out.fixed64(8, nanos(span.end_time));
    attributes(out, 9, &span.attributes);
    out.uint(10, span.dropped_attributes_count.into());
    for event in span.events.iter() {
        out.message(11, |out| {
            out.fixed64(1, nanos(event.timestamp));
            out.string(2, &event.name);
            attributes(out, 3, &event.attributes);
            out.uint(4, event.dropped_attributes_count.into());
        });
    }
    out.uint(12, span.events.dropped_count.into());
    for link in span.links.iter() {
        out.message(13, |out| {
            let context = &link.span_context;
            out.bytes(1, &context.trace_id().to_bytes());
            out.bytes(2, &context.span_id().to_bytes());
            out.string(3, &context.trace_state().header());
            attributes(out, 4, &link.attributes);
            out.uint(5, link.dropped_attributes_count.into());
            out.fixed32(6, flags(context, context.is_remote()));
        });
    }
    out.uint(14, span.links.dropped_count.into());
    out.message(15, |out| status(out, &span.status));
    out.fixed32(16, flags(context, span.parent_span_is_remote));
}

fn status(out: &mut Writer, status: &Status) {
    let (code, message) = match status {
        Status::Unset => (0, ""),
        Status::Ok => (1, ""),
        Status::Error { description } => (2, description.as_ref()),
    };
    out.string(2, message);
    out.uint(3, code);
}

/// OTLP's `SpanKind` numbers.
fn kind(kind: &SpanKind) -> u64 {
    match kind {
        SpanKind::Internal => 1,
        SpanKind::Server => 2,
        SpanKind::Client => 3,
        SpanKind::Producer => 4,
        SpanKind::Consumer => 5,
    }
}

fn flags(context: &SpanContext, parent_is_remote: bool) -> u32 {
    let remote = if parent_is_remote { IS_REMOTE } else { 0 };
    u32::from(context.trace_flags().to_u8()) | HAS_IS_REMOTE | remote
}

fn nanos(time: SystemTime) -> u64 {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
}

fn attributes<'a>(
    out: &mut Writer,
    field: u32,
    attributes: impl IntoIterator<Item = &'a KeyValue>,
) {
    for attribute in attributes {
        out.message(field, |out| {
            key_value(out, attribute.key.as_str(), &attribute.value);
        });
    }
}

fn key_value(out: &mut Writer, key: &str, value: &Value) {
    out.string(1, key);
    out.message(2, |out| any_value(out, value));
}

/// An `AnyValue`'s one member: written even when it is zero, as a oneof is.
fn any_value(out: &mut Writer, value: &Value) {
    match value {
        Value::String(text) => out.oneof_string(1, text.as_str()),
        Value::Bool(flag) => out.varint_field(2, u64::from(*flag)),
        Value::I64(number) => out.varint_field(3, u64::from_ne_bytes(number.to_ne_bytes())),
        Value::F64(number) => {
            out.key(4, FIXED64);
            out.raw(&number.to_le_bytes());
        }
        Value::Array(array) => out.message(5, |out| array_values(out, array)),
        // `Value` may grow; a kind this code does not know is sent as its text.
        other => out.oneof_string(1, &other.to_string()),
    }
}

fn array_values(out: &mut Writer, array: &Array) {
    match array {
        Array::Bool(values) => values.iter().for_each(|v| element(out, &Value::Bool(*v))),
        Array::I64(values) => values.iter().for_each(|v| element(out, &Value::I64(*v))),
        Array::F64(values) => values.iter().for_each(|v| element(out, &Value::F64(*v))),
        Array::String(values) => values
            .iter()
            .for_each(|v| out.message(1, |out| out.oneof_string(1, v.as_str()))),
        other => element(out, &Value::String(other.to_string().into())),
    }
}

fn element(out: &mut Writer, value: &Value) {
    out.message(1, |out| any_value(out, value));
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::time::Duration;

    use opentelemetry::trace::{SpanContext, TraceFlags, TraceId, TraceState};
    use opentelemetry::{InstrumentationScope, KeyValue};
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
    use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
    use opentelemetry_sdk::trace::{SpanEvents, SpanLinks};
    use prost::Message;

    use super::*;

    fn context(trace: u128, span: u64, state: &str) -> SpanContext {
        let state = TraceState::from_key_value(
            state
                .split(',')
                .filter(|kv| !kv.is_empty())
                .filter_map(|kv| kv.split_once('=')),
        )
        .unwrap();
        SpanContext::new(
            TraceId::from(trace),
            SpanId::from(span),
            TraceFlags::SAMPLED,
            false,
            state,
        )
    }

    fn a_span(name: &'static str, scope: &InstrumentationScope) -> SpanData {
        let start = UNIX_EPOCH + Duration::from_nanos(1_764_000_000_123_456_789);
        SpanData {
            span_context: context(7, 9, ""),
            parent_span_id: SpanId::INVALID,
            parent_span_is_remote: false,
            span_kind: SpanKind::Server,
            name: Cow::Borrowed(name),
            start_time: start,
            end_time: start + Duration::from_micros(85),
            attributes: vec![KeyValue::new("mcp.method.name", "tools/call")],
            dropped_attributes_count: 0,
            events: SpanEvents::default(),
            links: SpanLinks::default(),
            status: Status::Unset,
            instrumentation_scope: scope.clone(),
        }
    }

    /// Every kind of member: values of each type, an event, a link, an error, a remote
    /// parent, a trace state, a dropped count.
    fn everything(scope: &InstrumentationScope) -> SpanData {
        let mut span = a_span("GET provider", scope);
        span.span_context = context(u128::MAX - 3, 0x0102_0304_0506_0708, "vendor=x,other=y");
        span.parent_span_id = SpanId::from(11);
        span.parent_span_is_remote = true;
        span.span_kind = SpanKind::Client;
        span.attributes = vec![
            KeyValue::new("text", "é and \"quotes\""),
            KeyValue::new("empty", ""),
            KeyValue::new("yes", true),
            KeyValue::new("no", false),
            KeyValue::new("zero", 0_i64),
            KeyValue::new("negative", -42_i64),
            KeyValue::new("large", i64::MAX),
            KeyValue::new("ratio", 0.25_f64),
            KeyValue::new("a".repeat(200), "b".repeat(300)),
            KeyValue::new("bools", Value::Array(Array::Bool(vec![true, false]))),
            KeyValue::new("ints", Value::Array(Array::I64(vec![1, -1]))),
            KeyValue::new("floats", Value::Array(Array::F64(vec![1.5]))),
            KeyValue::new("texts", Value::Array(Array::String(vec!["x".into()]))),
        ];
        span.dropped_attributes_count = 2;
        span.events.events.push(opentelemetry::trace::Event::new(
            "retry",
            span.start_time + Duration::from_micros(3),
            vec![KeyValue::new("attempt", 2_i64)],
            1,
        ));
        span.events.dropped_count = 3;
        span.links.links.push(opentelemetry::trace::Link::new(
            context(5, 6, "k=v"),
            vec![KeyValue::new("why", "follows")],
            4,
        ));
        span.links.dropped_count = 5;
        span.status = Status::error("provider answered 503");
        span
    }

    /// What `opentelemetry-otlp` would send for the same spans.
    fn reference(resource: &Resource, spans: Vec<SpanData>) -> ExportTraceServiceRequest {
        let resource = ResourceAttributesWithSchema::from(resource);
        ExportTraceServiceRequest {
            resource_spans: group_spans_by_resource_and_scope(spans, &resource),
        }
    }

    fn decoded(resource: &Resource, spans: &[SpanData]) -> ExportTraceServiceRequest {
        let bytes = request(&encoded_resource(resource), spans);
        ExportTraceServiceRequest::decode(bytes.as_slice()).expect("valid protobuf")
    }

    #[test]
    fn spans_decode_to_what_the_reference_conversion_gives() {
        let resource = Resource::builder_empty()
            .with_service_name("grantry")
            .with_attribute(KeyValue::new("deployment.environment.name", "test"))
            .with_schema_url(
                Vec::<KeyValue>::new(),
                "https://opentelemetry.io/schemas/1.30",
            )
            .build();
        let grantry = InstrumentationScope::builder("grantry").build();
        let other = InstrumentationScope::builder("other")
            .with_version("1.2")
            .with_schema_url("https://example.com/schema")
            .with_attributes([KeyValue::new("scope.kind", "test")])
            .build();
        let spans = vec![
            a_span("tools/call list_invoices", &grantry),
            everything(&other),
            a_span("SELECT grants", &grantry),
        ];
        assert_eq!(decoded(&resource, &spans), reference(&resource, spans));
    }

    #[test]
    fn a_large_batch_and_an_empty_one_decode_alike() {
        let resource = Resource::builder().with_service_name("grantry").build();
        let scope = InstrumentationScope::builder("grantry").build();
        let spans: Vec<SpanData> = (0..600).map(|_| everything(&scope)).collect();
        assert_eq!(decoded(&resource, &spans), reference(&resource, spans));
        assert_eq!(decoded(&resource, &[]), reference(&resource, Vec::new()));
    }
}
