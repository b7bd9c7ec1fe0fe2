//! The span exporter: each batch the SDK's batch thread hands over is written as one OTLP
//! protobuf request ([`encode`]) and posted to the collector ([`destination`]) with a
//! blocking HTTP client, on that thread; tried again twice when the collector is unreachable
//! or asks for it. A failed export is logged (without its headers) and its spans dropped:
//! traces never hold back what grantry serves.
//!
//! Why not `opentelemetry-otlp`: it copies each span into intermediate message structs
//! before encoding them, which cost more than making the spans (BENCHMARKS.md, "Traces,
//! fourth pass"); the wire format is the same, and the tests check it against
//! `opentelemetry-proto`'s.

mod destination;
mod encode;
mod protobuf;

use std::time::Duration;

use bytes::Bytes;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};
use reqwest::header::CONTENT_TYPE;

use self::destination::Destination;
use self::encode::EncodedResource;
use super::Export;

/// How many times one batch is posted, at most.
const ATTEMPTS: u32 = 3;
/// The wait before the second post; doubled before the third.
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
/// The longest wait, whatever the collector's `Retry-After` says: the batch thread holds
/// the next batches meanwhile.
const LONGEST_WAIT: Duration = Duration::from_secs(5);
/// Names the exporter to the collector, as the specification asks exporters to.
const USER_AGENT: &str = concat!("grantry/", env!("CARGO_PKG_VERSION"), " OTel-OTLP-Exporter");

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
        // reqwest's client panics on its own thread without one (idempotent).
        grantry_base::net::install_tls_provider();
        let client = reqwest::blocking::Client::builder()
            .timeout(destination.timeout)
            .user_agent(USER_AGENT)
            .build()
            .map_err(|e| format!("the OTLP exporter's HTTP client: {e}"))?;
        Ok(Self {
            client,
            destination,
            resource: EncodedResource::default(),
        })
    }

    /// How long one post may take.
    pub(super) fn timeout(&self) -> Duration {
        self.destination.timeout
    }

    fn collector(&self) -> &str {
        self.destination.url.host_str().unwrap_or_default()
    }

    /// Posts `body`, again after a short wait when the collector was unreachable or asked
    /// for it (429, 502, 503, 504: the specification's retryable answers), at most
    /// [`ATTEMPTS`] times. A timeout is not tried again: it already took the whole budget.
    fn send(&self, body: Bytes) -> Result<(), String> {
        let mut attempt = 1;
        loop {
            match self.post(body.clone()) {
                Ok(()) => return Ok(()),
                Err(failure) if failure.retry && attempt < ATTEMPTS => {
                    let backoff = FIRST_BACKOFF * 2_u32.pow(attempt - 1);
                    std::thread::sleep(failure.after.unwrap_or(backoff).min(LONGEST_WAIT));
                    attempt += 1;
                }
                Err(failure) => return Err(failure.why),
            }
        }
    }

    fn post(&self, body: Bytes) -> Result<(), Failure> {
        let response = self
            .client
            .post(self.destination.url.clone())
            .headers(self.destination.headers.clone())
            .header(CONTENT_TYPE, "application/x-protobuf")
            .body(body)
            .send()
            .map_err(|e| Failure {
                why: grantry_base::net::transport_reason(&e),
                retry: e.is_connect(),
                after: None,
            })?;
        let status = response.status();
        let after = grantry_base::net::retry_after(response.headers());
        // Read to the end, so the connection is kept for the next batch.
        let _ = response.bytes();
        if status.is_success() {
            return Ok(());
        }
        Err(Failure {
            why: format!("the collector answered {status}"),
            retry: matches!(status.as_u16(), 429 | 502 | 503 | 504),
            after,
        })
    }
}

/// Why one post failed, and whether to try again (after how long, if the collector said).
struct Failure {
    why: String,
    retry: bool,
    after: Option<Duration>,
}

/// As its destination shows itself: the collector's host, never its headers.
impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("destination", &self.destination)
            .finish_non_exhaustive()
    }
}

impl SpanExporter for Exporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let body = Bytes::from(encode::request(&self.resource, &batch));
        self.send(body).map_err(|why| {
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

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::telemetry::Export;

    /// What a fake collector was posted, in order.
    type Posted = Arc<Mutex<Vec<Vec<u8>>>>;

    /// A collector answering each post with the next of `statuses` (the last one from then
    /// on); what it was posted, in order.
    fn collector(statuses: &'static [u16]) -> (Export, Posted) {
        let (export, posted, _) = collector_asking(statuses, None);
        (export, posted)
    }

    /// As [`collector`], a refusal carrying `Retry-After: retry_after` when given; also when
    /// each post came.
    fn collector_asking(
        statuses: &'static [u16],
        retry_after: Option<&'static str>,
    ) -> (Export, Posted, Arc<Mutex<Vec<std::time::Instant>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let posted = Arc::new(Mutex::new(Vec::new()));
        let times = Arc::new(Mutex::new(Vec::new()));
        let (seen, when) = (posted.clone(), times.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let mut reader = BufReader::new(stream.unwrap());
                while let Some(body) = read_post(&mut reader) {
                    when.lock().unwrap().push(std::time::Instant::now());
                    let mut seen = seen.lock().unwrap();
                    seen.push(body);
                    let status = statuses[(seen.len() - 1).min(statuses.len() - 1)];
                    let asked = match retry_after {
                        Some(after) if status >= 400 => format!("retry-after: {after}\r\n"),
                        _ => String::new(),
                    };
                    let answer = format!("HTTP/1.1 {status} X\r\n{asked}content-length: 0\r\n\r\n");
                    reader.get_mut().write_all(answer.as_bytes()).unwrap();
                }
            }
        });
        (Export::Endpoint(url.parse().unwrap()), posted, times)
    }

    fn read_post(reader: &mut BufReader<std::net::TcpStream>) -> Option<Vec<u8>> {
        let mut length = 0;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).ok()? == 0 {
                return None;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap();
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).ok()?;
        Some(body)
    }

    #[test]
    fn a_retry_waits_as_long_as_the_collector_asks_and_no_longer_than_the_cap() {
        let gap = |retry_after: &'static str| {
            let (export, _, times) = collector_asking(&[503, 200], Some(retry_after));
            Exporter::new(&export)
                .unwrap()
                .send(Bytes::from_static(b"spans"))
                .unwrap();
            let times = times.lock().unwrap();
            times[1] - times[0]
        };
        let asked = gap("1");
        assert!(asked >= Duration::from_secs(1), "waited {asked:?}, not 1 s");
        assert!(asked < Duration::from_secs(3), "waited {asked:?}");
        let capped = gap("60");
        assert!(capped >= LONGEST_WAIT, "waited {capped:?}");
        assert!(
            capped < LONGEST_WAIT + Duration::from_secs(2),
            "waited {capped:?}"
        );
        // A date is read as one: a past date asks no wait, not the backoff.
        let dated = gap("Wed, 21 Oct 2015 07:28:00 GMT");
        assert!(dated < FIRST_BACKOFF, "waited {dated:?}");
    }

    #[test]
    fn a_batch_is_posted_again_while_the_collector_asks_and_not_after_a_refusal() {
        for (statuses, posts, exported) in [
            (&[503, 502, 200][..], 3, true),
            (&[429][..], ATTEMPTS as usize, false),
            (&[400][..], 1, false),
            (&[200][..], 1, true),
        ] {
            let (export, posted) = collector(statuses);
            let exporter = Exporter::new(&export).unwrap();
            let body = Bytes::from_static(b"spans");
            assert_eq!(exporter.send(body).is_ok(), exported, "{statuses:?}");
            let posted = posted.lock().unwrap();
            assert_eq!(posted.len(), posts, "{statuses:?}");
            assert!(
                posted.iter().all(|p| p == b"spans"),
                "the same batch each time"
            );
        }
    }
}
