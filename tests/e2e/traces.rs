//! Traces, end to end: grantry exporting to a real OTLP receiver (support::otlp, decoding with
//! the official `opentelemetry-proto`), the Xero fake recording the `traceparent` each API
//! request carried. A sign-in yields the spans of its steps; a call continues the caller's
//! trace (from `_meta`, else the headers) through the store and the provider, whose
//! request carries the trace on; no attribute holds a secret the test met.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::fake_providers::Fake;
use crate::support::legacy::LegacySession;
use crate::support::mcp::url_and_form;
use crate::support::otlp::Collector;
use crate::support::{Browser, Mcp, Server, leaks};
use grantry::identity::{DEV_ISSUER, DEV_SUBJECT, Principal};

fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["name"] == name).collect()
}

fn in_trace<'a>(spans: &'a [Value], trace_id: &str) -> Vec<&'a Value> {
    spans.iter().filter(|s| s["trace_id"] == trace_id).collect()
}

fn random_hex(bytes: usize) -> String {
    (0..bytes)
        .map(|_| format!("{:02x}", rand::random::<u8>()))
        .collect()
}

/// The one span named `name` among `spans`.
fn the<'a>(spans: &[&'a Value], name: &str) -> &'a Value {
    let found: Vec<&&Value> = spans.iter().filter(|s| s["name"] == name).collect();
    assert_eq!(found.len(), 1, "one `{name}` in {spans:#?}");
    found[0]
}

#[tokio::test]
async fn a_sign_in_and_a_call_are_traced_through_the_store_and_the_provider() {
    let collector = Collector::start();
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog("xero")).unwrap();
    let key = grantry::seal::generate_key();
    let args = [
        "--providers",
        catalog.to_str().unwrap(),
        "--keys",
        &key,
        "--otlp-endpoint",
        &collector.url,
    ];
    // Batches leave every 100 ms rather than every 5 s.
    let server = Server::start_after("export OTEL_BSP_SCHEDULE_DELAY=100", &args).await;
    let mcp = Mcp::new(server.mcp_url());

    // A sign-in, step by step.
    let xero = json!({"provider": "xero"});
    let first = mcp
        .call_tool("list_invoices", xero.clone(), url_and_form())
        .await;
    let (link, state, input) = first.sign_in_round();
    let browser = Browser::new();
    let authorize = browser.continue_at(&link).await;
    let callback = browser.get(&authorize).await.location().unwrap();
    assert_eq!(browser.get(&callback).await.status, StatusCode::SEE_OTHER);
    let accepted = json!({ input: {"action": "accept"} });
    let retry = mcp
        .retry("list_invoices", xero.clone(), accepted, &state)
        .await;
    assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);
    let steps = [
        "GET /connect/{ticket}",
        "POST /connect/{ticket}",
        "GET /oauth/callback",
        "flows insert",
        "flows claim",
        "grants put",
        "POST provider-token",
    ];
    let spans = collector
        .wait_until(|s| steps.iter().all(|step| !named(s, step).is_empty()))
        .await;
    let callback_span = named(&spans, "GET /oauth/callback")[0];
    let token = named(&spans, "POST provider-token")[0];
    assert_eq!(
        token["trace_id"], callback_span["trace_id"],
        "the code redeemed in the callback's trace"
    );
    assert_eq!(callback_span["kind"], "SPAN_KIND_SERVER");
    assert_eq!(callback_span["attributes"]["http.route"], "/oauth/callback");

    // A call in the caller's trace, given in `_meta` (the header names another: `_meta` wins).
    let (trace_id, caller) = (random_hex(16), random_hex(8));
    let traceparent = format!("00-{trace_id}-{caller}-01");
    let elsewhere = format!("00-{}-{}-01", random_hex(16), random_hex(8));
    let answer = mcp
        .call_tool_with(
            "list_invoices",
            xero.clone(),
            json!({"traceparent": traceparent}),
            &[("traceparent", elsewhere)],
        )
        .await;
    assert_eq!(answer.result()["resultType"], "complete", "{}", answer.raw);
    // The request's span ends after those inside it, so it may come in a later batch.
    let spans = collector
        .wait_until(|s| {
            let trace: Vec<Value> = in_trace(s, &trace_id).into_iter().cloned().collect();
            ["GET provider-api", "tools/call list_invoices"]
                .iter()
                .all(|name| !named(&trace, name).is_empty())
        })
        .await;
    let trace = in_trace(&spans, &trace_id);
    let request = the(&trace, "tools/call list_invoices");
    assert_eq!(
        request["parent_span_id"], caller,
        "continues the caller's span"
    );
    assert_eq!(request["kind"], "SPAN_KIND_SERVER");
    assert_eq!(request["resource"]["service.name"], "grantry");
    let dev = Principal {
        issuer: DEV_ISSUER.into(),
        subject: DEV_SUBJECT.into(),
    };
    assert_eq!(request["attributes"]["enduser.pseudo.id"], &*dev.tag());
    assert_eq!(request["attributes"]["grantry.outcome"], "complete");
    assert_eq!(
        request["attributes"]["gen_ai.tool.name"], "list_invoices",
        "the request's span is the tool call's"
    );
    let store: Vec<&&Value> = trace
        .iter()
        .filter(|s| s["attributes"]["db.collection.name"] == "grants")
        .collect();
    assert!(!store.is_empty(), "a store span in the trace: {trace:#?}");
    assert_eq!(store[0]["attributes"]["db.system.name"], "sqlite");
    let provider = the(&trace, "GET provider-api");
    assert_eq!(provider["kind"], "SPAN_KIND_CLIENT");
    assert_eq!(provider["attributes"]["http.response.status_code"], 200);
    assert_eq!(provider["attributes"]["grantry.peer.name"], "xero");
    let carried = fake.counters.traceparents.lock().unwrap().clone();
    let sent = format!("00-{trace_id}-{}-01", provider["span_id"].as_str().unwrap());
    assert!(
        carried.contains(&sent),
        "the API request carried the trace on: {carried:?}"
    );

    // Without `_meta`'s, the header's trace is continued.
    let (header_trace, header_caller) = (random_hex(16), random_hex(8));
    let header = format!("00-{header_trace}-{header_caller}-01");
    let answer = mcp
        .call_tool_with("list_invoices", xero, json!({}), &[("traceparent", header)])
        .await;
    assert_eq!(answer.result()["resultType"], "complete", "{}", answer.raw);
    let spans = collector
        .wait_until(|s| {
            in_trace(s, &header_trace)
                .iter()
                .any(|span| span["name"] == "tools/call list_invoices")
        })
        .await;
    let request = the(&in_trace(&spans, &header_trace), "tools/call list_invoices");
    assert_eq!(request["parent_span_id"], header_caller);

    // A legacy-era session's call gets a request span of its own (not the `initialize`'s).
    let session = LegacySession::open(&server.mcp_url(), None, url_and_form()).await;
    let answer = session
        .call_tool("list_invoices", json!({"provider": "xero"}))
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.raw);
    let spans = collector
        .wait_until(|s| {
            let legacy: Vec<&Value> = named(s, "tools/call list_invoices")
                .into_iter()
                .filter(|span| span["parent_span_id"] == "")
                .collect();
            legacy.iter().any(|call| {
                let trace = in_trace(s, call["trace_id"].as_str().unwrap());
                trace.iter().any(|t| t["name"] == "GET provider-api")
            })
        })
        .await;
    assert!(
        named(&spans, "initialize").is_empty(),
        "a legacy request has no span of its own: {spans:#?}"
    );

    // No attribute holds a secret this test met; the suite's leak scan searches them too.
    let exported = serde_json::to_string_pretty(&spans).unwrap();
    let callback_query: Vec<String> = url::Url::parse(&callback)
        .unwrap()
        .query_pairs()
        .map(|(_, v)| v.into_owned())
        .collect();
    let ticket = link.rsplit('/').next().unwrap().to_owned();
    let mut secrets = fake.issued_tokens();
    secrets.extend(callback_query);
    secrets.extend([state, ticket, DEV_SUBJECT.to_owned()]);
    for secret in &secrets {
        assert!(
            !exported.contains(secret.as_str()),
            "`{secret}` is in an exported span"
        );
    }
    leaks::keep_log(0, &exported);
    drop(server);
}
