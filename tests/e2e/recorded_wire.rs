//! grantry answers the 2026-07-28 era itself (`mcp::modern`). Before it did, rmcp 3.11
//! answered it, and `golden/modern_wire.json` holds what rmcp answered each request here:
//! status, content type, `Allow` and the JSON-RPC message (sealed values and links masked,
//! since each server seals with its own key). grantry must answer each the same, except
//! where the file says otherwise: three ids rmcp refused with a plain-text 415 (a fraction,
//! `null`, one past `i64`) get the JSON-RPC `-32600` every other malformed request gets.
//! Since then the file changed where grantry's answers changed on purpose: discovery and
//! `initialize` declare resources and MCP Apps, `tools/list` has the connect card's tools,
//! `list_invoices` names the demo's account (its user), and a client that cannot show a sign-in
//! link or a confirmation gets a tool result instead of `-32021` (the default's).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::support::mcp::{VERSION, meta, url_and_form};
use crate::support::{Browser, Mcp, Server};

/// One request, sent as written: every header is the case's own.
struct Case {
    what: &'static str,
    headers: Vec<(&'static str, String)>,
    body: String,
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

fn case(what: &'static str, method: &str, params: Value) -> Case {
    let name = params["name"].as_str().map(str::to_owned);
    Case {
        what,
        headers: standard_headers(method, name.as_deref()),
        body: message(json!(7), method, params, url_and_form()).to_string(),
    }
}

/// A well-formed case changed by `change` (headers, body).
fn variant(
    what: &'static str,
    base: Case,
    change: impl FnOnce(&mut Vec<(&'static str, String)>, &mut Value),
) -> Case {
    let mut headers = base.headers;
    let mut body: Value = serde_json::from_str(&base.body).unwrap();
    change(&mut headers, &mut body);
    Case {
        what,
        headers,
        body: body.to_string(),
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
    let discover = || case("discover", "server/discover", json!({}));
    let call = || case("list_invoices", "tools/call", list_invoices(json!({})));
    vec![
        discover(),
        variant("discover, string id", discover(), |_, b| {
            b["id"] = json!("req-1")
        }),
        case("tools/list", "tools/list", json!({})),
        call(),
        variant("list_invoices without URL elicitation", call(), |_, b| {
            b["params"]["_meta"] = meta(json!({}))
        }),
        case(
            "list_invoices with a bad argument",
            "tools/call",
            list_invoices(json!({"status": "bogus"})),
        ),
        variant("a requestState that does not open", call(), |_, b| {
            b["params"]["requestState"] = json!("g1.not-sealed");
            b["params"]["inputResponses"] = json!({"connect_demo": {"action": "accept"}});
        }),
        case(
            "list_connections",
            "tools/call",
            json!({"name": "list_connections", "arguments": {}}),
        ),
        case("an unknown tool", "tools/call", json!({"name": "nope"})),
        case(
            "a tool with a form round",
            "tools/call",
            json!({"name": "create_invoice", "arguments": {}}),
        ),
        case("ping", "ping", json!({})),
        variant("no Mcp-Method", discover(), |h, _| {
            h.retain(|(n, _)| *n != "mcp-method")
        }),
        variant("Mcp-Method disagrees", discover(), |h, _| {
            set(h, "mcp-method", "tools/list")
        }),
        variant("Mcp-Name disagrees", call(), |h, _| {
            set(h, "mcp-name", "list_connections")
        }),
        variant("an Mcp-Param header", call(), |h, _| {
            set(h, "mcp-param-status", "open")
        }),
        variant("no MCP-Protocol-Version", discover(), |h, _| {
            h.retain(|(n, _)| *n != "mcp-protocol-version")
        }),
        variant("an older version", discover(), |h, b| {
            set(h, "mcp-protocol-version", "2025-11-25");
            b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
        }),
        variant("an unknown version", call(), |h, b| {
            set(h, "mcp-protocol-version", "2099-01-01");
            b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
        }),
        variant("no clientCapabilities", call(), |_, b| {
            let meta = b["params"]["_meta"].as_object_mut().unwrap();
            meta.remove("io.modelcontextprotocol/clientCapabilities");
        }),
        variant("malformed clientCapabilities", call(), |_, b| {
            b["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
                json!({"elicitation": 5});
        }),
        variant("malformed clientInfo", discover(), |_, b| {
            b["params"]["_meta"]["io.modelcontextprotocol/clientInfo"] = json!({"name": 5});
        }),
        variant("another _meta member", call(), |_, b| {
            b["params"]["_meta"]["progressToken"] = json!(1);
        }),
        variant("Accept without SSE", discover(), |h, _| {
            set(h, "accept", "application/json")
        }),
        variant("Accept with weights", discover(), |h, _| {
            set(h, "accept", "application/json;q=0.9, text/event-stream")
        }),
        variant("Content-Type with a charset", call(), |h, _| {
            set(h, "content-type", "application/json; charset=utf-8")
        }),
        variant("a foreign Origin", discover(), |h, _| {
            set(h, "origin", "https://evil.example")
        }),
        variant("id -0", discover(), |_, b| b["id"] = json!(-0.0)),
        variant("fractional id", discover(), |_, b| b["id"] = json!(1.5)),
        variant("id with an escape", discover(), |_, b| {
            b["id"] = json!("a\"b")
        }),
        variant("null id", discover(), |_, b| b["id"] = Value::Null),
        variant("jsonrpc 1.0", discover(), |_, b| {
            b["jsonrpc"] = json!("1.0")
        }),
        variant("an unknown member", discover(), |_, b| {
            b["extra"] = json!(1)
        }),
        variant(
            "tools/list with a cursor",
            case("", "tools/list", json!({})),
            |_, b| b["params"]["cursor"] = json!("c"),
        ),
        variant("arguments not an object", call(), |_, b| {
            b["params"]["arguments"] = json!([1])
        }),
    ]
}

/// Requests the recorded answers pin beyond the common ones: the edges of the envelope, the
/// headers and the methods, as rmcp 3.11 answered each.
fn edge_cases() -> Vec<Case> {
    let discover = || case("discover", "server/discover", json!({}));
    let call = || case("list_invoices", "tools/call", list_invoices(json!({})));
    let with_provider = || {
        variant("", call(), |h, b| {
            b["params"]["arguments"] = json!({"provider": "demo"});
            set(h, "mcp-param-provider", "demo");
        })
    };
    let meta_text = meta(url_and_form()).to_string();
    let raw = |what: &'static str, method: &str, body: String| Case {
        what,
        headers: standard_headers(method, None),
        body,
    };
    vec![
        raw(
            "a notification",
            "notifications/initialized",
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/initialized","params":{{"_meta":{meta_text}}}}}"#
            ),
        ),
        raw(
            "a batch",
            "server/discover",
            format!(
                r#"[{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{meta_text}}}}}]"#
            ),
        ),
        raw(
            "a response",
            "server/discover",
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
        ),
        raw("an empty body", "server/discover", String::new()),
        raw("not JSON", "server/discover", "{not json".to_owned()),
        raw(
            "an object id",
            "server/discover",
            format!(
                r#"{{"jsonrpc":"2.0","id":{{}},"method":"server/discover","params":{{"_meta":{meta_text}}}}}"#
            ),
        ),
        raw(
            "a repeated member",
            "server/discover",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","method":"tools/list","params":{{"_meta":{meta_text}}}}}"#
            ),
        ),
        raw(
            "params an array",
            "tools/list",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[]}"#.to_owned(),
        ),
        variant("no params", discover(), |_, b| {
            b.as_object_mut().unwrap().remove("params");
        }),
        variant("no _meta", discover(), |_, b| {
            b["params"] = json!({});
        }),
        variant("no protocolVersion in _meta", discover(), |_, b| {
            let meta = b["params"]["_meta"].as_object_mut().unwrap();
            meta.remove("io.modelcontextprotocol/protocolVersion");
        }),
        variant("header and _meta versions differ", discover(), |_, b| {
            b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2025-11-25");
        }),
        variant("a log level in _meta", discover(), |_, b| {
            b["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
        }),
        variant("no clientInfo", discover(), |_, b| {
            let meta = b["params"]["_meta"].as_object_mut().unwrap();
            meta.remove("io.modelcontextprotocol/clientInfo");
        }),
        variant("a huge id", discover(), |_, b| {
            b["id"] = json!(18_446_744_073_709_551_615_u64)
        }),
        variant("a unicode id", discover(), |_, b| b["id"] = json!("é-1")),
        variant("Mcp-Method repeated", discover(), |h, _| {
            h.push(("mcp-method", "server/discover".to_owned()))
        }),
        variant("Mcp-Method in other case", discover(), |h, _| {
            set(h, "mcp-method", "Server/Discover")
        }),
        variant("no Mcp-Name", call(), |h, _| {
            h.retain(|(n, _)| *n != "mcp-name")
        }),
        variant("no Content-Type", discover(), |h, _| {
            h.retain(|(n, _)| *n != "content-type")
        }),
        variant("a text Content-Type", discover(), |h, _| {
            set(h, "content-type", "text/plain")
        }),
        variant("no Accept", discover(), |h, _| {
            h.retain(|(n, _)| *n != "accept")
        }),
        variant("Accept */*", discover(), |h, _| set(h, "accept", "*/*")),
        variant("a session id", discover(), |h, _| {
            set(h, "mcp-session-id", "abc")
        }),
        variant("an allowed Origin", discover(), |h, b| {
            let _ = b;
            set(h, "origin", "http://127.0.0.1")
        }),
        case(
            "initialize in this era",
            "initialize",
            json!({"protocolVersion": "2026-07-28", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}),
        ),
        case("an unknown method", "prompts/list", json!({})),
        case("subscriptions/listen", "subscriptions/listen", json!({})),
        case(
            "tools/call without a name",
            "tools/call",
            json!({"arguments": {}}),
        ),
        variant("tools/call with a number name", call(), |_, b| {
            b["params"]["name"] = json!(5)
        }),
        variant("arguments null", call(), |_, b| {
            b["params"]["arguments"] = Value::Null
        }),
        variant("no arguments", call(), |_, b| {
            b["params"].as_object_mut().unwrap().remove("arguments");
        }),
        variant("an unknown argument", call(), |_, b| {
            b["params"]["arguments"] = json!({"colour": "red"})
        }),
        variant("requestState a number", call(), |_, b| {
            b["params"]["requestState"] = json!(5)
        }),
        variant("inputResponses an array", call(), |_, b| {
            b["params"]["inputResponses"] = json!([1])
        }),
        variant("inputResponses without a state", call(), |_, b| {
            b["params"]["inputResponses"] = json!({"connect_demo": {"action": "accept"}})
        }),
        variant("an unknown params member", call(), |_, b| {
            b["params"]["colour"] = json!("red")
        }),
        variant("a provider and its header", with_provider(), |_, _| {}),
        variant("a provider header in base64", with_provider(), |h, _| {
            set(h, "mcp-param-provider", "=?base64?ZGVtbw==?=")
        }),
        variant(
            "a provider header that disagrees",
            with_provider(),
            |h, _| set(h, "mcp-param-provider", "xero"),
        ),
        variant("a provider without its header", with_provider(), |h, _| {
            h.retain(|(n, _)| *n != "mcp-param-provider")
        }),
        variant(
            "a provider header in bad base64",
            with_provider(),
            |h, _| set(h, "mcp-param-provider", "=?base64?***?="),
        ),
        variant("an unknown provider", with_provider(), |h, b| {
            b["params"]["arguments"] = json!({"provider": "nowhere"});
            set(h, "mcp-param-provider", "nowhere");
        }),
        case(
            "void_invoice",
            "tools/call",
            json!({"name": "void_invoice", "arguments": {"invoice_id": "x"}}),
        ),
        variant(
            "void_invoice without form elicitation",
            case(
                "",
                "tools/call",
                json!({"name": "void_invoice", "arguments": {"invoice_id": "x"}}),
            ),
            |_, b| b["params"]["_meta"] = meta(json!({"elicitation": {"url": {}}})),
        ),
        case(
            "disconnect_account",
            "tools/call",
            json!({"name": "disconnect_account", "arguments": {}}),
        ),
        case(
            "create_invoice with some fields",
            "tools/call",
            json!({"name": "create_invoice", "arguments": {"customer": "Ada", "currency": "EUR"}}),
        ),
        variant(
            "create_invoice without form elicitation",
            case(
                "",
                "tools/call",
                json!({"name": "create_invoice", "arguments": {}}),
            ),
            |_, b| b["params"]["_meta"] = meta(json!({"elicitation": {"url": {}}})),
        ),
    ]
}

/// Other HTTP methods on `/mcp` in this era.
fn method_cases() -> Vec<Case> {
    let with = |what: &'static str, method: &str| {
        let mut headers = standard_headers("server/discover", None);
        headers.push((":method", method.to_owned()));
        Case {
            what,
            headers,
            body: String::new(),
        }
    };
    vec![
        with("GET", "GET"),
        with("DELETE", "DELETE"),
        with("PUT", "PUT"),
        with("OPTIONS", "OPTIONS"),
    ]
}

/// The case that declines a sign-in, with the state sealed by this `server`.
async fn declined_on(server: &Server) -> Case {
    let (_, state, key) = Mcp::new(server.mcp_url()).first_round().await;
    variant(
        "a declined sign-in",
        case("", "tools/call", list_invoices(json!({}))),
        |_, b| {
            b["params"]["requestState"] = json!(state);
            b["params"]["inputResponses"] = json!({ key: {"action": "decline"} });
        },
    )
}

/// One answer as the file records it.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Seen {
    status: u16,
    content_type: String,
    allow: String,
    body: Value,
}

fn recorded() -> BTreeMap<String, Seen> {
    let text = include_str!("golden/modern_wire.json");
    serde_json::from_str(text).expect("the recorded answers parse")
}

async fn send(server: &Server, case: &Case) -> Seen {
    let method = case
        .headers
        .iter()
        .find(|(n, _)| *n == ":method")
        .map_or("POST", |(_, v)| v.as_str());
    let mut request = reqwest::Client::new()
        .request(method.parse().unwrap(), server.mcp_url())
        .body(case.body.clone());
    for (name, value) in case.headers.iter().filter(|(n, _)| *n != ":method") {
        request = request.header(*name, value);
    }
    let response = request.send().await.expect("grantry answers");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    let (status, content_type, allow) = (
        response.status().as_u16(),
        header("content-type"),
        header("allow"),
    );
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    Seen {
        status,
        content_type,
        allow,
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

/// Answers changed on purpose are written back to the file, not checked, with
/// `GRANTRY_RECORD_WIRE=1` (read the file's diff before committing it).
static RECORDING: std::sync::Mutex<BTreeMap<String, Value>> =
    std::sync::Mutex::new(BTreeMap::new());

fn recording() -> bool {
    std::env::var_os("GRANTRY_RECORD_WIRE").is_some()
}

fn write_recording() {
    let answers = RECORDING.lock().unwrap();
    let mut text = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut writer = serde_json::Serializer::with_formatter(&mut text, formatter);
    serde::Serialize::serialize(&*answers, &mut writer).unwrap();
    text.push(b'\n');
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/e2e/golden/modern_wire.json"
    );
    std::fs::write(path, text).unwrap();
}

fn expect(recorded: &BTreeMap<String, Seen>, what: &str, seen: &Seen) {
    if recording() {
        let entry = json!({
            "status": seen.status, "contentType": seen.content_type,
            "allow": seen.allow, "body": seen.body,
        });
        RECORDING.lock().unwrap().insert(what.to_owned(), entry);
        return;
    }
    let Some(expected) = recorded.get(what) else {
        panic!("no answer recorded for {what}");
    };
    assert_eq!(
        seen, expected,
        "{what}: grantry answers unlike the recorded answer"
    );
}

#[tokio::test]
async fn every_request_of_this_era_is_answered_as_rmcp_answered_it() {
    let recorded = recorded();
    let server = Server::start(&[]).await;
    let mut cases = fixed_cases();
    cases.extend(edge_cases());
    cases.extend(method_cases());
    for case in &cases {
        expect(&recorded, case.what, &send(&server, case).await);
    }
    // An answer that holds the server's own sealed state.
    let declined = send(&server, &declined_on(&server).await).await;
    expect(&recorded, "a declined sign-in", &declined);
    assert_eq!(
        declined.body["result"]["isError"], true,
        "{:?}",
        declined.body
    );

    // With the account connected, the call completes with invoices.
    let (link, _, _) = Mcp::new(server.mcp_url()).first_round().await;
    Browser::new().sign_in(&link, true).await;
    let connected = case("", "tools/call", list_invoices(json!({})));
    let seen = send(&server, &connected).await;
    assert!(
        seen.body["result"]["structuredContent"]["invoices"].is_array(),
        "{:?}",
        seen.body
    );
    expect(&recorded, "list_invoices connected", &seen);
    if recording() {
        write_recording();
        return;
    }
    // Every case was sent: none of the file's answers is left unchecked.
    assert_eq!(recorded.len(), cases.len() + 2);
}
