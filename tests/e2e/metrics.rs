//! `/metrics`: scraped as Prometheus would, after a sign-in that was declined, one that
//! completed, and calls of each outcome; no personal data in any line.

use serde_json::{Value, json};

use crate::support::mcp::url_and_form;
use crate::support::{Browser, Mcp, Server};

/// The value of the sample whose name and labels are exactly `series`.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no sample `{series}` in:\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn metrics_count_requests_sign_ins_and_outcomes_without_personal_data() {
    let server = Server::start(&[]).await;
    let mcp = Mcp::new(server.mcp_url());
    mcp.request("server/discover", json!({}), url_and_form())
        .await;
    mcp.request("tools/list", json!({}), url_and_form()).await;

    // One sign-in declined at the provider, then one completed.
    let (link, _, _) = mcp.first_round().await;
    let browser = Browser::new();
    browser.sign_in(&link, false).await;
    let first = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();
    browser.sign_in(&link, true).await;
    let retry = mcp
        .retry(
            "list_invoices",
            json!({}),
            json!({ key.clone(): {"action": "accept"} }),
            &state,
        )
        .await;
    assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);
    // A requestState that does not open is a JSON-RPC error.
    let bad = mcp
        .retry(
            "list_invoices",
            json!({}),
            json!({ key: {"action": "accept"} }),
            "not-a-sealed-state",
        )
        .await;
    assert_eq!(bad.error_code(), -32602);

    let text = server.metrics().await;
    let requests = |method: &str, outcome: &str| {
        sample(
            &text,
            &format!(r#"grantry_mcp_requests_total{{method="{method}",outcome="{outcome}"}}"#),
        )
    };
    assert_eq!(requests("server/discover", "complete"), 1.0);
    assert_eq!(requests("tools/list", "complete"), 1.0);
    assert_eq!(requests("tools/call", "input_required"), 2.0);
    assert_eq!(requests("tools/call", "complete"), 1.0);
    assert_eq!(requests("tools/call", "error"), 1.0);
    let sign_ins = |outcome: &str| {
        sample(
            &text,
            &format!(r#"grantry_sign_ins_total{{provider="demo",outcome="{outcome}"}}"#),
        )
    };
    assert_eq!(sign_ins("started"), 2.0);
    assert_eq!(sign_ins("declined"), 1.0);
    assert_eq!(sign_ins("completed"), 1.0);
    assert_eq!(
        sample(
            &text,
            r#"grantry_mcp_request_duration_seconds_count{method="tools/call"}"#
        ),
        4.0
    );
    assert!(
        text.contains(
            r#"grantry_mcp_request_duration_seconds_bucket{method="tools/call",le="0.005"}"#
        ),
        "latency is a histogram with buckets"
    );
    assert!(text.contains("# TYPE grantry_held_retries gauge"));
    assert_eq!(
        sample(&text, "grantry_held_retries"),
        0.0,
        "nothing held now"
    );

    // No principal, account, flow or link appears: only method, outcome, provider, area, and
    // the lifecycle's event type, refresh trigger, health state and endpoint name, and what
    // happened to a task.
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let labels = line.split_once('{').map_or("", |(_, rest)| rest);
        for pair in labels.trim_end_matches(|c| c != '}').split("\",") {
            let name = pair
                .split('=')
                .next()
                .unwrap_or_default()
                .trim_matches(['{', '}']);
            assert!(
                [
                    "method", "outcome", "provider", "area", "le", "type", "trigger", "state",
                    "endpoint", "event", ""
                ]
                .contains(&name),
                "unexpected label `{name}` in {line}"
            );
        }
    }
    for secret in [
        state.as_str(),
        link.as_str(),
        "local-user",
        "urn:grantry:dev",
    ] {
        assert!(!text.contains(secret), "metrics hold no personal data");
    }
}

#[tokio::test]
async fn refusals_before_the_protocol_count_as_refused() {
    let server = Server::start(&["--rate-mcp-ip", "2"]).await;
    let mcp = Mcp::new(server.mcp_url());
    for _ in 0..4 {
        mcp.request("tools/list", json!({}), url_and_form()).await;
    }
    let text = server.metrics().await;
    let refused: Value = sample(
        &text,
        r#"grantry_mcp_requests_total{method="tools/list",outcome="refused"}"#,
    )
    .into();
    assert_eq!(refused, json!(2.0), "the calls over the limit got 429");
}

#[tokio::test]
async fn a_held_retry_shows_in_the_gauge_until_the_sign_in_lands() {
    let server = Server::start(&["--retry-hold", "30"]).await;
    let mcp = std::sync::Arc::new(Mcp::new(server.mcp_url()));
    let (link, state, key) = mcp.first_round().await;
    let waiting = mcp.held_retry(key, state);
    let started = std::time::Instant::now();
    while sample(&server.metrics().await, "grantry_held_retries") < 1.0 {
        assert!(started.elapsed().as_secs() < 10, "the retry was never held");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Past the edge's switch to a stream (500 ms), so the answer is counted as streamed.
    tokio::time::sleep(std::time::Duration::from_millis(700)).await;
    Browser::new().sign_in(&link, true).await;
    let answer = waiting.await.unwrap();
    assert_eq!(answer.result()["resultType"], "complete", "{}", answer.raw);
    let text = server.metrics().await;
    assert_eq!(sample(&text, "grantry_held_retries"), 0.0);
    assert_eq!(
        sample(
            &text,
            r#"grantry_mcp_requests_total{method="tools/call",outcome="streamed"}"#
        ),
        1.0,
        "the held retry was answered as a stream"
    );
}

/// With `--log-format json` every line is JSON, and an audit line names its subjects only by
/// hashes: the principal's tag, the flow's digest (one sign-in's events share it), the
/// provider's id; never the subject, a token or a code.
#[tokio::test]
async fn audit_lines_are_json_with_hashed_ids_only() {
    use grantry::identity::{DEV_ISSUER, DEV_SUBJECT, Principal};
    let server = Server::start(&["--log-format", "json"]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, _, _) = mcp.first_round().await;
    let browser = Browser::new();
    browser.sign_in(&link, true).await.assert_connected();
    assert!(server.log_shows("grant.stored").await);
    let secrets = browser.seen().secrets();
    let tag = Principal {
        issuer: DEV_ISSUER.to_owned(),
        subject: DEV_SUBJECT.to_owned(),
    }
    .tag();
    let log = server.log();
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    let audit: Vec<&Value> = lines
        .iter()
        .filter(|line| line["target"] == "grantry::audit")
        .collect();
    let events: Vec<&str> = audit
        .iter()
        .map(|line| line["fields"]["event"].as_str().unwrap())
        .collect();
    assert!(
        events.contains(&"connect.started") && events.contains(&"grant.stored"),
        "{events:?}"
    );
    let digest = |v: &Value| {
        v.as_str()
            .is_some_and(|s| s.len() == 43 && !s.contains(' '))
    };
    let mut flows = Vec::new();
    for line in &audit {
        let fields = &line["fields"];
        assert_eq!(fields["principal"], &*tag, "{line}");
        assert_eq!(fields["provider"], "demo", "{line}");
        let text = line.to_string();
        assert!(!text.contains(DEV_SUBJECT), "no raw subject: {text}");
        for secret in &secrets {
            assert!(!text.contains(secret.as_str()), "no secret: {text}");
        }
        // Lifecycle events belong to a connection, not a flow (the keep-alive writes some).
        if fields["event"].as_str().unwrap().starts_with("connection.") {
            assert_eq!(fields["flow"], "", "{line}");
        } else {
            assert!(digest(&fields["flow"]), "a flow digest: {line}");
            flows.push(fields["flow"].clone());
        }
    }
    flows.dedup();
    assert_eq!(flows.len(), 1, "one sign-in, one flow digest: {flows:?}");
}
