//! Traces: OpenTelemetry spans for each MCP request, tool call, sign-in step, store operation,
//! provider request and webhook delivery, exported as OTLP over HTTP (protobuf) when an
//! endpoint is configured ([`Traces::start`], [`otlp`]), and nothing at all when it is not.
//!
//! Spans are made with the OpenTelemetry API itself, not as `tracing` spans bridged by
//! `tracing-opentelemetry`: that bridge keeps every span in the subscriber's registry too and
//! looks it up, locks it and reads the clock on each callback, which cost more than the
//! spans themselves. A request's span rides in a task-local, and the spans made while
//! serving it name it as their parent ([`context`]). With traces off, nothing is made: each
//! place checks [`enabled`] first.
//!
//! The caller's W3C trace context is continued ([`propagate`]: from the request's `_meta`,
//! else its headers) and passed on to providers ([`outbound`]). Attributes never carry a
//! token, code, state, cookie, email or subject: a person appears as the same hashed tag the
//! audit lines use (`enduser.pseudo.id`), a URL as its host.

pub(crate) mod context;
mod otlp;
pub(crate) mod outbound;
pub(crate) mod propagate;

use std::borrow::Cow;
use std::sync::OnceLock;

use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

/// The tracer spans are made with, once traces are on.
static TRACER: OnceLock<SdkTracer> = OnceLock::new();

/// Whether spans are exported (so worth making at all).
pub(crate) fn enabled() -> bool {
    TRACER.get().is_some()
}

/// A span being recorded, in the context it makes for its children. It ends when the last
/// copy is dropped (a request's span may live on in an SSE body).
#[derive(Clone)]
#[must_use = "a span ends when dropped"]
pub(crate) struct Traced(Context);

impl Traced {
    /// Starts a span under `parent` (an empty context: a trace of its own); `None` when
    /// traces are off.
    pub(crate) fn start(
        name: impl Into<Cow<'static, str>>,
        kind: SpanKind,
        attributes: Vec<KeyValue>,
        parent: &Context,
    ) -> Option<Self> {
        let tracer = TRACER.get()?;
        let span = tracer
            .span_builder(name)
            .with_kind(kind)
            .with_attributes(attributes)
            .start_with_context(tracer, parent);
        Some(Self(parent.with_span(span)))
    }

    /// The context the span makes: its children's parent, and what goes out in headers.
    pub(crate) fn context(&self) -> &Context {
        &self.0
    }

    /// Adds an attribute learnt while the span runs (a status, an outcome).
    pub(crate) fn set(&self, attribute: KeyValue) {
        self.0.span().set_attribute(attribute);
    }

    /// Marks the span failed.
    pub(crate) fn failed(&self) {
        self.0.span().set_status(Status::error(""));
    }
}

/// The span of one store operation, for as long as the caller keeps it (`let _span = …` at
/// the top of the operation), a child of the request being served.
pub(crate) fn store_span(
    name: &'static str,
    system: &'static str,
    operation: &'static str,
    collection: &'static str,
) -> Option<Traced> {
    if !enabled() {
        return None;
    }
    let attributes = vec![
        KeyValue::new("db.system.name", system),
        KeyValue::new("db.operation.name", operation),
        KeyValue::new("db.collection.name", collection),
    ];
    Traced::start(name, SpanKind::Client, attributes, &context::parent())
}

/// Where traces go. Its `Debug` shows the collector's host, never a password in its URL.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Export {
    /// A collector's base URL (`/v1/traces` is added).
    Endpoint(url::Url),
    /// The standard `OTEL_EXPORTER_OTLP_*` variables, read by the exporter.
    FromEnvironment,
}

impl std::fmt::Debug for Export {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Export::Endpoint(url) => f
                .debug_tuple("Endpoint")
                .field(&url.host_str().unwrap_or_default())
                .finish(),
            Export::FromEnvironment => f.write_str("FromEnvironment"),
        }
    }
}

/// The running export: spans batched and sent from the SDK's batch thread ([`otlp`]).
pub(crate) struct Traces {
    provider: SdkTracerProvider,
    /// How long the last batch may take at exit: one post's time, and a second.
    at_exit: std::time::Duration,
}

impl Traces {
    /// Builds the exporter for `export`; spans are made from here on.
    pub(crate) fn start(export: &Export) -> Result<Self, String> {
        let exporter = otlp::Exporter::new(export)?;
        let at_exit = exporter.timeout() + std::time::Duration::from_secs(1);
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name("grantry")
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        // One process, one export: `serve` starts it once.
        let _ = TRACER.set(provider.tracer("grantry"));
        Ok(Self { provider, at_exit })
    }

    /// Sends what is still batched; at exit.
    pub(crate) fn shutdown(&self) {
        if let Err(e) = self.provider.shutdown_with_timeout(self.at_exit) {
            tracing::warn!(error = %e, "traces not all exported at exit");
        }
    }
}
