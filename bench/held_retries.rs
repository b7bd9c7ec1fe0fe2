//! The benchmark's held-retry scenario: many retries held open at once while one sign-in is
//! pending, the memory they cost, and whether every one of them wakes when it lands.
//!
//! `held_retries BASE_URL SERVER_PID COUNT` (grantry with `dev` identity, the demo provider,
//! `--max-held-retries` ≥ COUNT and a long `--retry-hold`):
//! 1. makes the first round of `list_invoices` (nothing connected), keeping its requestState;
//! 2. sends COUNT retries with it at once and waits until `/metrics` shows all COUNT held;
//! 3. reads the server's RSS before and while they are held;
//! 4. completes the sign-in (`browser_rounds BASE_URL 1 0`, beside this binary) and waits for
//!    every retry's answer, counting those that completed with invoices.
//!
//! Prints one JSON line.

// Benchmark scaffolding, not product: an unwrap that fails is the run's failure, nothing here
// is anyone's API, and a run reads top to bottom, however long.
#![allow(clippy::unwrap_used, unreachable_pub, clippy::too_many_lines)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};

const VERSION: &str = "2026-07-28";

#[tokio::main]
async fn main() {
    grantry_base::net::install_tls_provider();
    let mut args = std::env::args().skip(1);
    let base = args.next().expect("BASE_URL");
    let pid: u32 = args
        .next()
        .and_then(|a| a.parse().ok())
        .expect("SERVER_PID");
    let count: usize = args.next().and_then(|a| a.parse().ok()).expect("COUNT");
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let first = call(
        &http,
        &base,
        json!({"name": "list_invoices", "arguments": {}}),
    )
    .await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let key = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let retry = json!({
        "name": "list_invoices",
        "arguments": {},
        "inputResponses": {key: {"action": "accept"}},
        "requestState": result["requestState"],
    });
    let rss_before = rss_kib(pid);
    let waiters: Vec<_> = (0..count)
        .map(|_| {
            let (http, base, retry) = (http.clone(), base.clone(), retry.clone());
            tokio::spawn(async move { call(&http, &base, retry).await })
        })
        .collect();
    let started = Instant::now();
    while held(&http, &base).await < count as f64 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "not all retries were held"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let held_after = started.elapsed();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_held = rss_kib(pid);
    let sign_in = std::env::current_exe()
        .unwrap()
        .with_file_name("browser_rounds");
    let sign_in_base = base.clone();
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new(sign_in)
            .args([&sign_in_base, "1", "0"])
            .status()
    })
    .await
    .unwrap()
    .expect("browser_rounds runs");
    assert!(status.success(), "the sign-in failed");
    let landed = Instant::now();
    let mut completed = 0;
    let mut other = 0;
    let mut other_kinds = std::collections::BTreeMap::new();
    for waiter in waiters {
        let answer = waiter.await.unwrap();
        if answer["result"]["resultType"] == "complete"
            && answer["result"]["structuredContent"]["invoices"].is_array()
        {
            completed += 1;
        } else {
            other += 1;
            let text = answer["result"]["content"][0]["text"]
                .as_str()
                .or(answer["error"]["message"].as_str())
                .unwrap_or("(no answer)");
            *other_kinds
                .entry(text.chars().take(120).collect::<String>())
                .or_insert(0) += 1;
        }
    }
    for (text, n) in &other_kinds {
        eprintln!("{n} answered: {text}");
    }
    println!(
        r#"{{"held":{count},"all_held_after_ms":{},"rss_before_kib":{rss_before},"rss_held_kib":{rss_held},"bytes_per_held_retry":{},"completed":{completed},"other":{other},"all_woke_within_ms":{}}}"#,
        held_after.as_millis(),
        (rss_held.saturating_sub(rss_before) * 1024) / count as u64,
        landed.elapsed().as_millis()
    );
}

async fn call(http: &reqwest::Client, base: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "grantry-bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let text = http
        .post(format!("{base}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "list_invoices")
        .timeout(Duration::from_secs(600))
        .body(body.to_string())
        .send()
        .await
        .expect("grantry answers")
        .text()
        .await
        .expect("the whole answer");
    // JSON, or an SSE stream whose last `data:` line is the answer.
    let json = text
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("data: "))
        .unwrap_or(&text);
    serde_json::from_str(json).unwrap_or(Value::Null)
}

/// The `grantry_held_retries` gauge.
async fn held(http: &reqwest::Client, base: &str) -> f64 {
    let text = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("grantry_held_retries "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}
