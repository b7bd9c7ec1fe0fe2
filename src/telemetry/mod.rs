//! Traces: OpenTelemetry spans for each MCP request, tool call, sign-in step, store operation,
//! provider request and webhook delivery, exported as OTLP over HTTP (protobuf) when an
//! endpoint is configured ([`Traces::start`]), and nothing at all when it is not.
//!
//! Every grantry span has the target [`TARGET`]. No span is entered: a request's span rides
//! in a task-local, and the spans made while serving it name it as their parent
//! ([`context`]); entering spans on every poll was most of what traces cost. With traces off, the log filter turns that
//! target off ([`directive`]), so a span costs one disabled-callsite check and records nothing.
//! With traces on, the caller's W3C trace context is continued ([`propagate`]: from the
//! request's `_meta`, else its headers) and passed on to providers ([`outbound`]).
//!
//! Attributes never carry a token, code, state, cookie, email or subject: a person appears as
//! the same hashed tag the audit lines use (`enduser.pseudo.id`), a URL as its host.

pub mod context;
pub mod outbound;
pub mod propagate;

use std::sync::atomic::{AtomicBool, Ordering};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};

/// The target of every grantry span (the literal the span macros repeat).
pub const TARGET: &str = "grantry::spans";

static ON: AtomicBool = AtomicBool::new(false);

/// Whether spans are exported (so worth the work of extracting and injecting context).
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

/// The span of one store operation, for as long as the caller keeps it (`let _span = …` at
/// the top of the operation), a child of the request being served.
pub fn store_span(
    name: &'static str,
    system: &'static str,
    operation: &'static str,
    collection: &'static str,
) -> tracing::Span {
    if !enabled() {
        return tracing::Span::none();
    }
    tracing::info_span!(
        target: "grantry::spans",
        parent: context::parent(),
        "store",
        otel.name = name,
        db.system.name = system,
        db.operation.name = operation,
        db.collection.name = collection,
    )
}

/// The log filter's directive for grantry's spans: on at `info` when traces are exported
/// (whatever `GRANTRY_LOG` says), off otherwise.
pub fn directive(on: bool) -> tracing_subscriber::filter::Directive {
    let level = if on { "info" } else { "off" };
    format!("{TARGET}={level}")
        .parse()
        .expect("the span target's directive parses")
}

/// Where traces go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Export {
    /// A collector's base URL (`/v1/traces` is added).
    Endpoint(url::Url),
    /// The standard `OTEL_EXPORTER_OTLP_*` variables, read by the exporter.
    FromEnvironment,
}

/// The running export: spans batched and sent from the exporter's own thread.
pub struct Traces {
    provider: SdkTracerProvider,
}

impl Traces {
    /// Builds the exporter for `export`; spans count as on from here.
    pub fn start(export: &Export) -> Result<Self, String> {
        let mut exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary);
        if let Export::Endpoint(base) = export {
            let traces = base
                .join("v1/traces")
                .map_err(|e| format!("--otlp-endpoint: {e}"))?;
            exporter = exporter.with_endpoint(traces.as_str());
        }
        let exporter = exporter
            .build()
            .map_err(|e| format!("the OTLP exporter: {e}"))?;
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name("grantry")
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        ON.store(true, Ordering::Relaxed);
        Ok(Self { provider })
    }

    /// The tracer the logging layer turns spans into OpenTelemetry spans with.
    pub fn tracer(&self) -> Tracer {
        self.provider.tracer("grantry")
    }

    /// Sends what is still batched; at exit.
    pub fn shutdown(&self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "traces not all exported at exit");
        }
    }
}
