//! What `grantry bridge` adds to a plain tool call: the same `tools/call` of
//! `list_connections` (no sign-in, no provider) sent directly to grantry over HTTP and
//! through the bridge over stdio, one at a time, in alternating rounds, in one run.
//!
//! `bridge_latency GRANTRY_BINARY [CALLS_PER_ROUND] [ROUNDS]` starts grantry (`dev` identity,
//! SQLite in a temporary directory, a free port) and one bridge to it, and prints p50 and
//! p99 of each path, the difference and the ratio. Run on the release build:
//!
//! ```text
//! cargo build --release --bin grantry --example bridge_latency
//! target/release/examples/bridge_latency target/release/grantry 2000 5
//! ```

// Benchmark scaffolding, not product: an unwrap that fails is the run's failure, and nothing
// here is anyone's API.
#![allow(clippy::unwrap_used, unreachable_pub)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const VERSION: &str = "2026-07-28";

fn main() {
    let mut args = std::env::args().skip(1);
    let binary = args.next().expect("GRANTRY_BINARY");
    let calls: usize = args.next().map_or(2000, |a| a.parse().unwrap());
    let rounds: usize = args.next().map_or(5, |a| a.parse().unwrap());
    grantry_base::net::install_tls_provider();
    let data = tempfile::tempdir().unwrap();
    // A port picked is free when picked: should another process take it first, grantry
    // exits and starts again on another.
    let (mut server, port) = (0..5)
        .find_map(|_| {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            start_grantry(&binary, port, data.path()).map(|child| (child, port))
        })
        .expect("grantry did not start on any of five ports");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut bridge = Bridge::start(&binary, &url);
    let direct = Direct::new(&url);
    let (mut through_http, mut through_bridge) = (Vec::new(), Vec::new());
    for round in 0..=rounds {
        let (a, b) = (direct.calls(calls), bridge.calls(calls));
        // Round 0 warms both paths up (connections, the bridge's tools/list) and is dropped.
        if round > 0 {
            through_http.extend(a);
            through_bridge.extend(b);
        }
    }
    report(&mut through_http, &mut through_bridge);
    bridge.stop();
    server.kill().unwrap();
    server.wait().unwrap();
}

/// grantry on `port`, once it answers there; `None` if it exited (its port was taken).
fn start_grantry(binary: &str, port: u16, data: &std::path::Path) -> Option<Child> {
    let mut child = Command::new(binary)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        // The rate limits would refuse a benchmark's thousands of calls a minute.
        .args([
            "--rate-mcp-principal",
            "1000000000",
            "--rate-mcp-ip",
            "1000000000",
        ])
        .arg("--data-dir")
        .arg(data)
        .env("GRANTRY_LOG", "error")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let health = format!("http://127.0.0.1:{port}/healthz");
    for _ in 0..200 {
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        // Healthy and still ours: one that lost its port has exited by now.
        if is_healthy(&health) && child.try_wait().unwrap().is_none() {
            return Some(child);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    panic!("grantry did not start");
}

fn is_healthy(url: &str) -> bool {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        reqwest::get(url)
            .await
            .is_ok_and(|r| r.status().is_success())
    })
}

fn call_params(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "list_connections", "arguments": {},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    }})
}

/// Calls straight to grantry, one keep-alive connection.
struct Direct {
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
    url: String,
}

impl Direct {
    fn new(url: &str) -> Self {
        Self {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
            http: reqwest::Client::new(),
            url: url.to_owned(),
        }
    }

    fn calls(&self, n: usize) -> Vec<Duration> {
        self.runtime.block_on(async {
            let mut taken = Vec::with_capacity(n);
            for id in 0..n as u64 {
                let started = Instant::now();
                let text = self
                    .http
                    .post(&self.url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", VERSION)
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", "list_connections")
                    .body(call_params(id).to_string())
                    .send()
                    .await
                    .unwrap()
                    .text()
                    .await
                    .unwrap();
                taken.push(started.elapsed());
                let answer = parse_answer(&text);
                assert!(answer["result"].is_object(), "{answer}");
            }
            taken
        })
    }
}

/// The same calls through `grantry bridge`, as a stdio client sends them.
struct Bridge {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
}

impl Bridge {
    fn start(binary: &str, url: &str) -> Self {
        let mut child = Command::new(binary)
            .args(["bridge", url])
            .env("GRANTRY_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            input,
            output,
        }
    }

    fn calls(&mut self, n: usize) -> Vec<Duration> {
        let mut taken = Vec::with_capacity(n);
        let mut line = String::new();
        for id in 0..n as u64 {
            let started = Instant::now();
            writeln!(self.input, "{}", call_params(id)).unwrap();
            line.clear();
            self.output.read_line(&mut line).unwrap();
            taken.push(started.elapsed());
            let answer: Value = serde_json::from_str(&line).unwrap();
            assert!(answer["result"].is_object(), "{answer}");
        }
        taken
    }

    fn stop(mut self) {
        drop(self.input);
        self.child.wait().unwrap();
    }
}

/// A JSON answer, or the last event of an SSE one.
fn parse_answer(text: &str) -> Value {
    let json = match text.trim_start().starts_with('{') {
        true => text,
        false => text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("data: "))
            .unwrap(),
    };
    serde_json::from_str(json).unwrap()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn report(direct: &mut [Duration], bridged: &mut [Duration]) {
    direct.sort();
    bridged.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("path      calls  p50 ms  p99 ms");
    for (name, samples) in [("direct", &*direct), ("bridge", &*bridged)] {
        let (p50, p99) = (percentile(samples, 0.5), percentile(samples, 0.99));
        println!(
            "{name:<8} {:>6} {:>7.3} {:>7.3}",
            samples.len(),
            ms(p50),
            ms(p99)
        );
    }
    for (label, p) in [("p50", 0.5), ("p99", 0.99)] {
        let (a, b) = (percentile(direct, p), percentile(bridged, p));
        println!(
            "{label}: the bridge adds {:.3} ms ({:.2}× the direct call)",
            ms(b) - ms(a),
            ms(b) / ms(a)
        );
    }
}
