//! The span exporter: each batch the SDK's batch thread hands over is written as one OTLP
//! protobuf request ([`encode`]) and posted to the collector ([`destination`]) with a
//! blocking HTTP client, on that thread. A failed export is logged (without its headers)
//! and its spans dropped: traces never hold back what grantry serves.
//!
//! Why not `opentelemetry-otlp`: it copies each span into intermediate message structs
//! before encoding them, which cost more than making the spans (BENCHMARKS.md, "Traces,
//! fourth pass"); the wire format is the same, and the tests check it against
//! `opentelemetry-proto`'s.

mod destination;
mod encode;

use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use reqwest::header::CONTENT_TYPE;

use self::destination::Destination;
use self::encode::EncodedResource;
use super::Export;

/// Exports to one collector over OTLP/HTTP with protobuf bodies.
pub(super) struct Exporter {
    client: reqwest::blocking::Client,
    destination: Destination,
    resource: EncodedResource,
}

impl Exporter {
    /// The exporter `export` names, its standard variables read from the environment. Built
    /// outside any async runtime (the blocking client runs one of its own).
    pub(super) fn new(export: &Export) -> Result<Self, String> {
        let destination = Destination::resolve(export, |name| std::env::var(name).ok())?;
        let client = reqwest::blocking::Client::builder()
            .timeout(destination.timeout)
            .build()
            .map_err(|e| format!("the OTLP exporter's HTTP client: {e}"))?;
        Ok(Self {
            client,
            destination,
            resource: EncodedResource::default(),
        })
    }

    fn collector(&self) -> &str {
        self.destination.url.host_str().unwrap_or_default()
    }

    fn post(&self, body: Vec<u8>) -> Result<(), String> {
        let response = self
            .client
            .post(self.destination.url.clone())
            .headers(self.destination.headers.clone())
            .header(CONTENT_TYPE, "application/x-protobuf")
            .body(body)
            .send()
            .map_err(|e| e.without_url().to_string())?;
        let status = response.status();
        // Read to the end, so the connection is kept for the next batch.
        let _ = response.bytes();
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("the collector answered {status}"))
        }
    }
}

/// The collector's host only: its URL may carry credentials, its headers do.
impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("collector", &self.collector())
            .finish_non_exhaustive()
    }
}

impl SpanExporter for Exporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let body = encode::request(&self.resource, &batch);
        self.post(body).map_err(|why| {
            tracing::warn!(
                collector = self.collector(),
                spans = batch.len(),
                error = %why,
                "traces not exported"
            );
            OTelSdkError::InternalFailure(why)
        })
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.resource = encode::encoded_resource(resource);
    }
}
