//! The fixtures that answer `input_required` (SEP-2322), and the capability diagnostics.
//!
//! A retry is judged by its `inputResponses`: an answer that is missing or of the wrong shape
//! gets the question again (a new `input_required`), never a complete result. Rounds that
//! carry progress between them do it in a sealed `requestState` ([`Claims`]).

use rmcp::model::{CallToolResponse, ErrorData};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::super::answers::{codes, complete, from_json, invalid_request_state};
use super::Round;
use crate::clock::unix_now;
use crate::seal::Purpose;
use crate::state::AppState;
use crate::tools::ToolResult;

/// How long a fixture's `requestState` stays valid.
const STATE_TTL_SECS: i64 = 10 * 60;

/// What a fixture's `requestState` carries from one round to the next.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct Claims {
    /// The round that issued the state (multi-round), 0 for single-round fixtures.
    #[serde(rename = "r", default)]
    round: u8,
    /// The name answered in round 1 (multi-round).
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}

/// Binds a state to its tool: it opens for no other tool and for no sign-in round.
fn binding(tool: &str) -> Vec<u8> {
    format!("conformance/{tool}").into_bytes()
}

fn seal(round: &Round<'_>, claims: &Claims) -> String {
    let binding = binding(round.tool);
    round.state.sealer.seal_timed(
        Purpose::RequestState,
        &binding,
        claims,
        unix_now(),
        STATE_TTL_SECS,
    )
}

/// Opens a presented state; any failure is the usual `invalid_request_state` error.
pub(super) fn open(state: &AppState, tool: &str, sealed: &str) -> Result<Claims, ErrorData> {
    state
        .sealer
        .open_timed(Purpose::RequestState, &binding(tool), sealed, unix_now())
        .map_err(|reason| {
            tracing::info!(%reason, tool, "conformance requestState refused");
            invalid_request_state()
        })
}

fn elicit(message: &str, field: &str, kind: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {field: {"type": kind}},
                "required": [field],
            },
        },
    })
}

fn sampling(text: &str, max_tokens: u32) -> Value {
    json!({
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
            "maxTokens": max_tokens,
        },
    })
}

fn roots() -> Value {
    json!({"method": "roots/list", "params": {}})
}

fn input_required(requests: Value, state: Option<String>) -> CallToolResponse {
    CallToolResponse::InputRequired(from_json(json!({
        "resultType": "input_required",
        "inputRequests": requests,
        "requestState": state,
    })))
}

fn done(text: impl Into<String>) -> CallToolResponse {
    complete(ToolResult {
        text: text.into(),
        structured: None,
        is_error: false,
    })
}

fn missing(capability: &str) -> ErrorData {
    ErrorData::new(
        codes::MISSING_CAPABILITY,
        format!("This tool needs the client capability '{capability}'"),
        Some(json!({"requiredCapabilities": {capability: {}}})),
    )
}

/// The string `field` of an accepted elicitation answer.
fn accepted<'a>(answer: Option<&'a Value>, field: &str) -> Option<&'a str> {
    let answer = answer?;
    if answer["action"] != "accept" {
        return None;
    }
    answer["content"][field].as_str()
}

/// The text of a sampling answer.
fn sampled(answer: Option<&Value>) -> Option<&str> {
    let content = &answer?["content"];
    if content["type"] != "text" {
        return None;
    }
    content["text"].as_str()
}

/// The root URIs of a roots answer.
fn root_uris(answer: Option<&Value>) -> Option<Vec<&str>> {
    let roots = answer?["roots"].as_array()?;
    Some(roots.iter().filter_map(|r| r["uri"].as_str()).collect())
}

pub(super) fn call(round: &Round<'_>) -> Result<CallToolResponse, ErrorData> {
    let answer = |key: &str| round.response(key);
    let response = match round.tool {
        "test_missing_capability" => missing_capability(round)?,
        "test_streaming_elicitation" => streaming_elicitation(round)?,
        // Completes on `user_name` alone: this fixture keeps no state between rounds.
        "test_input_required_result_elicitation" => match accepted(answer("user_name"), "name") {
            Some(name) => done(format!("Hello, {name}!")),
            None => input_required(
                json!({"user_name": elicit("What is your name?", "name", "string")}),
                None,
            ),
        },
        "test_input_required_result_sampling" => match sampled(answer("capital_question")) {
            Some(text) => done(format!("The client answered: {text}")),
            None => input_required(
                json!({"capital_question": sampling("What is the capital of France?", 100)}),
                None,
            ),
        },
        "test_input_required_result_list_roots" => match root_uris(answer("client_roots")) {
            Some(uris) => done(format!("Client roots: {}", uris.join(", "))),
            None => input_required(json!({"client_roots": roots()}), None),
        },
        "test_input_required_result_request_state" => confirm_with_state(round, true),
        // Only the sealed state matters here: the suite appends to it and expects an error,
        // which `open` already gave. Any state that opens, with an accepted answer, completes.
        "test_input_required_result_tampered_state" => confirm_with_state(round, false),
        "test_input_required_result_multiple_inputs" => multiple_inputs(round),
        "test_input_required_result_multi_round" => multi_round(round),
        "test_input_required_result_capabilities" => by_capabilities(round)?,
        other => {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {other}"),
                None,
            ));
        }
    };
    Ok(response)
}

fn missing_capability(round: &Round<'_>) -> Result<CallToolResponse, ErrorData> {
    if !round.declares("sampling") {
        return Err(missing("sampling"));
    }
    Ok(match sampled(round.response("q")) {
        Some(text) => done(format!("Sampled: {text}")),
        None => input_required(json!({"q": sampling("Say hi", 10)}), None),
    })
}

fn streaming_elicitation(round: &Round<'_>) -> Result<CallToolResponse, ErrorData> {
    if !round.declares("elicitation") {
        return Err(missing("elicitation"));
    }
    Ok(match accepted(round.response("answer"), "answer") {
        Some(text) => done(format!("Answered: {text}")),
        None => input_required(
            json!({"answer": elicit("Answer?", "answer", "string")}),
            None,
        ),
    })
}

/// Completes once a sealed state comes back with an accepted confirmation (`ok` true, when
/// `needs_ok`).
fn confirm_with_state(round: &Round<'_>, needs_ok: bool) -> CallToolResponse {
    let confirmed = round.response("confirm").is_some_and(|a| {
        a["action"] == "accept" && (!needs_ok || a["content"]["ok"] == Value::Bool(true))
    });
    if round.claims.is_some() && confirmed {
        done("Confirmed with requestState: state-ok")
    } else {
        input_required(
            json!({"confirm": elicit("Please confirm", "ok", "boolean")}),
            Some(seal(round, &Claims::default())),
        )
    }
}

fn multiple_inputs(round: &Round<'_>) -> CallToolResponse {
    let name = accepted(round.response("user_name"), "name");
    let greeting = sampled(round.response("greeting"));
    let roots_given = root_uris(round.response("client_roots")).is_some();
    match (&round.claims, name, greeting, roots_given) {
        (Some(_), Some(name), Some(greeting), true) => done(format!("{greeting} {name}")),
        _ => input_required(
            json!({
                "user_name": elicit("What is your name?", "name", "string"),
                "greeting": sampling("Generate a greeting", 50),
                "client_roots": roots(),
            }),
            Some(seal(round, &Claims::default())),
        ),
    }
}

/// Asks what the declared capabilities allow, and completes on any answer.
fn by_capabilities(round: &Round<'_>) -> Result<CallToolResponse, ErrorData> {
    let mut requests = serde_json::Map::new();
    if round.declares("sampling") {
        requests.insert("q".into(), sampling("Say hi", 10));
    }
    if round.declares("elicitation") {
        requests.insert("e".into(), elicit("Name?", "name", "string"));
    }
    if requests.is_empty() {
        return Err(missing("sampling"));
    }
    Ok(if round.responses.is_empty() {
        input_required(Value::Object(requests), None)
    } else {
        done("Answered what the client could answer.")
    })
}

/// Round 1 asks a name, round 2 a colour; each round's state is sealed afresh.
fn multi_round(round: &Round<'_>) -> CallToolResponse {
    let claims = round.claims.as_ref();
    if let (Some(Claims { round: 1, .. }), Some(name)) =
        (claims, accepted(round.response("step1"), "name"))
    {
        let next = Claims {
            round: 2,
            name: Some(name.to_owned()),
        };
        return input_required(
            json!({"step2": elicit("Step 2: What is your favorite color?", "color", "string")}),
            Some(seal(round, &next)),
        );
    }
    if let (
        Some(Claims {
            round: 2,
            name: Some(name),
        }),
        Some(color),
    ) = (claims, accepted(round.response("step2"), "color"))
    {
        return done(format!("{name} likes {color}."));
    }
    let first = Claims {
        round: 1,
        name: None,
    };
    input_required(
        json!({"step1": elicit("Step 1: What is your name?", "name", "string")}),
        Some(seal(round, &first)),
    )
}
