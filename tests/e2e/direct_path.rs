//! The direct path (`mcp::direct`) answers exactly as rmcp does. Every request here goes to a
//! grantry with the direct path and to one with `--mcp-direct-path false`; the answers must
//! agree in status, content type and JSON-RPC message. Sealed values and links are masked,
//! since each server seals with its own key. The first server's `/metrics` show how many
//! requests the direct path took, so one that declined everything (or took a request it must
//! leave to rmcp) fails the test.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::mcp::{VERSION, meta, url_and_form};
use crate::support::{Browser, Mcp, Server};

/// One request, sent as written: every header is the case's own.
struct Case {
    what: &'static str,
    headers: Vec<(&'static str, String)>,
    body: String,
    /// Whether the direct path takes it (else rmcp answers on both servers).
    direct: bool,
}

fn standard_headers(method: &str, name: Option<&str>) -> Vec<(&'static str, String)> {
    let mut headers = vec![
        ("content-type", "application/json".to_owned()),
        ("accept", "application/json, text/event-stream".to_owned()),
        ("mcp-protocol-version", VERSION.to_owned()),
        ("mcp-method", method.to_owned()),
    ];
    if let Some(name) = name {
        headers.push(("mcp-name", name.to_owned()));
    }
    headers
}

fn message(id: Value, method: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = meta(capabilities);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn case(what: &'static str, method: &str, params: Value, direct: bool) -> Case {
    let name = params["name"].as_str().map(str::to_owned);
    Case {
        what,
        headers: standard_headers(method, name.as_deref()),
        body: message(json!(7), method, params, url_and_form()).to_string(),
        direct,
    }
}

/// A well-formed case changed by `change` (headers, body); rmcp's unless `direct`.
fn variant(
    what: &'static str,
    base: Case,
    direct: bool,
    change: impl FnOnce(&mut Vec<(&'static str, String)>, &mut Value),
) -> Case {
    let mut headers = base.headers;
    let mut body: Value = serde_json::from_str(&base.body).unwrap();
    change(&mut headers, &mut body);
    Case {
        what,
        headers,
        body: body.to_string(),
        direct,
    }
}

fn set(headers: &mut Vec<(&'static str, String)>, name: &'static str, value: &str) {
    headers.retain(|(n, _)| *n != name);
    headers.push((name, value.to_owned()));
}

fn list_invoices(arguments: Value) -> Value {
    json!({"name": "list_invoices", "arguments": arguments})
}

/// The requests whose answers do not depend on the server's own sealed values.
fn fixed_cases() -> Vec<Case> {
    let discover = || case("discover", "server/discover", json!({}), true);
    let call = || {
        case(
            "list_invoices",
            "tools/call",
            list_invoices(json!({})),
            true,
        )
    };
    vec![
        discover(),
        variant("discover, string id", discover(), true, |_, b| {
            b["id"] = json!("req-1")
        }),
        case("tools/list", "tools/list", json!({}), true),
        call(),
        variant(
            "list_invoices without URL elicitation",
            call(),
            true,
            |_, b| b["params"]["_meta"] = meta(json!({})),
        ),
        case(
            "list_invoices with a bad argument",
            "tools/call",
            list_invoices(json!({"status": "bogus"})),
            true,
        ),
        variant("a requestState that does not open", call(), true, |_, b| {
            b["params"]["requestState"] = json!("g1.not-sealed");
            b["params"]["inputResponses"] = json!({"connect_demo": {"action": "accept"}});
        }),
        case(
            "list_connections",
            "tools/call",
            json!({"name": "list_connections", "arguments": {}}),
            true,
        ),
        // From here on, rmcp answers both servers.
        case(
            "an unknown tool",
            "tools/call",
            json!({"name": "nope"}),
            false,
        ),
        case(
            "a tool with a form round",
            "tools/call",
            json!({"name": "create_invoice", "arguments": {}}),
            false,
        ),
        case("ping", "ping", json!({}), false),
        variant("no Mcp-Method", discover(), false, |h, _| {
            h.retain(|(n, _)| *n != "mcp-method")
        }),
        variant("Mcp-Method disagrees", discover(), false, |h, _| {
            set(h, "mcp-method", "tools/list")
        }),
        variant("Mcp-Name disagrees", call(), false, |h, _| {
            set(h, "mcp-name", "list_connections")
        }),
        variant("an Mcp-Param header", call(), false, |h, _| {
            set(h, "mcp-param-status", "open")
        }),
        variant("no MCP-Protocol-Version", discover(), false, |h, _| {
            h.retain(|(n, _)| *n != "mcp-protocol-version")
        }),
        variant("an older version", discover(), false, |h, b| {
            set(h, "mcp-protocol-version", "2025-11-25");
            b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
        }),
        variant("an unknown version", call(), false, |h, b| {
            set(h, "mcp-protocol-version", "2099-01-01");
            b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
        }),
        variant("no clientCapabilities", call(), false, |_, b| {
            let meta = b["params"]["_meta"].as_object_mut().unwrap();
            meta.remove("io.modelcontextprotocol/clientCapabilities");
        }),
        variant("malformed clientCapabilities", call(), false, |_, b| {
            b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
                json!({"elicitation": 5});
        }),
        variant("malformed clientInfo", discover(), false, |_, b| {
            b["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] = json!({"name": 5});
        }),
        variant("another _meta member", call(), false, |_, b| {
            b["params"]["_meta"]["progressToken"] = json!(1);
        }),
        variant("Accept without SSE", discover(), false, |h, _| {
            set(h, "accept", "application/json")
        }),
        variant("Accept with weights", discover(), false, |h, _| {
            set(h, "accept", "application/json;q=0.9, text/event-stream")
        }),
        variant("Content-Type with a charset", call(), false, |h, _| {
            set(h, "content-type", "application/json; charset=utf-8")
        }),
        variant("a foreign Origin", discover(), false, |h, _| {
            set(h, "origin", "https://evil.example")
        }),
        variant("id -0", discover(), false, |_, b| b["id"] = json!(-0.0)),
        variant("fractional id", discover(), false, |_, b| {
            b["id"] = json!(1.5)
        }),
        variant("id with an escape", discover(), false, |_, b| {
            b["id"] = json!("a\"b")
        }),
        variant("null id", discover(), false, |_, b| b["id"] = Value::Null),
        variant("jsonrpc 1.0", discover(), false, |_, b| {
            b["jsonrpc"] = json!("1.0")
        }),
        variant("an unknown member", discover(), false, |_, b| {
            b["extra"] = json!(1)
        }),
        variant(
            "tools/list with a cursor",
            case("", "tools/list", json!({}), false),
            false,
            |_, b| b["params"]["cursor"] = json!("c"),
        ),
        variant("arguments not an object", call(), false, |_, b| {
            b["params"]["arguments"] = json!([1])
        }),
    ]
}

/// The case that declines a sign-in, with the state sealed by this `server`.
async fn declined_on(server: &Server) -> Case {
    let (_, state, key) = Mcp::new(server.mcp_url()).first_round().await;
    variant(
        "a declined sign-in",
        case("", "tools/call", list_invoices(json!({})), true),
        true,
        |_, b| {
            b["params"]["requestState"] = json!(state);
            b["params"]["inputResponses"] = json!({ key: {"action": "decline"} });
        },
    )
}

#[derive(Debug, PartialEq)]
struct Seen {
    status: StatusCode,
    content_type: String,
    body: Value,
}

async fn send(server: &Server, case: &Case) -> Seen {
    let mut request = reqwest::Client::new()
        .post(server.mcp_url())
        .body(case.body.clone());
    for (name, value) in &case.headers {
        request = request.header(*name, value);
    }
    let response = request.send().await.expect("grantry answers");
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Seen {
        status,
        content_type,
        body: masked(body, &server.base),
    }
}

/// Sealed values and the server's own address, which differ between servers by design.
fn masked(value: Value, base: &str) -> Value {
    match value {
        Value::String(s) if s.starts_with("g1.") => json!("<sealed>"),
        Value::String(s) => match s.split_once("/connect/") {
            Some((before, _)) => json!(format!(
                "{}/connect/<ticket>",
                before.replace(base, "<base>")
            )),
            None => Value::String(s.replace(base, "<base>")),
        },
        Value::Array(items) => items.into_iter().map(|v| masked(v, base)).collect(),
        Value::Object(map) => map.into_iter().map(|(k, v)| (k, masked(v, base))).collect(),
        other => other,
    }
}

async fn direct_answers(server: &Server) -> f64 {
    server
        .metrics()
        .await
        .lines()
        .filter(|l| l.starts_with("grantry_mcp_direct_answers_total{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

async fn compare(direct: &Server, full: &Server, case: &Case) {
    let (a, b) = (send(direct, case).await, send(full, case).await);
    assert_eq!(a, b, "{}: the direct path answers unlike rmcp", case.what);
}

#[tokio::test]
async fn the_direct_path_answers_every_request_as_rmcp_does_and_leaves_the_rest_to_it() {
    let direct = Server::start(&[]).await;
    let full = Server::start(&["--mcp-direct-path", "false"]).await;
    let cases = fixed_cases();
    for case in &cases {
        compare(&direct, &full, case).await;
    }
    // Each server's own first round is one direct answer on the direct server.
    let mut taken = cases.iter().filter(|c| c.direct).count() + 1;

    // Answers that hold a server's own sealed state are compared with each server's state.
    let (declined_direct, declined_full) = (declined_on(&direct).await, declined_on(&full).await);
    let (a, b) = (
        send(&direct, &declined_direct).await,
        send(&full, &declined_full).await,
    );
    assert_eq!(a, b, "a declined sign-in");
    assert_eq!(a.body["result"]["isError"], true, "{:?}", a.body);
    taken += 1;

    // With the account connected, the call completes with invoices on both.
    for server in [&direct, &full] {
        let (link, _, _) = Mcp::new(server.mcp_url()).first_round().await;
        Browser::new().sign_in(&link, true).await;
    }
    taken += 1;
    let connected = case(
        "list_invoices connected",
        "tools/call",
        list_invoices(json!({})),
        true,
    );
    let (a, b) = (
        send(&direct, &connected).await,
        send(&full, &connected).await,
    );
    assert_eq!(a, b, "list_invoices once connected");
    assert!(
        a.body["result"]["structuredContent"]["invoices"].is_array(),
        "{:?}",
        a.body
    );
    taken += 1;

    assert_eq!(direct_answers(&direct).await, taken as f64);
    assert_eq!(direct_answers(&full).await, 0.0);
}
