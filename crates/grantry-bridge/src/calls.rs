//! A `tools/call` through the bridge. The server may answer `input_required`: a URL
//! elicitation (a sign-in) is shown by the client if it can, else opened in the browser and
//! accepted; a form question goes to a client that declared form, and to no one else (no
//! answer means nothing is done: a confirmation is never given for the user). The retry
//! then waits, held by the server, until the sign-in lands or `--wait` passes. Under
//! `--no-browser` no round reaches anyone: the call ends with a tool error.

use serde_json::{Map, Value, json};
use tokio::time::{Duration, Instant};

use super::links;
use super::profile::{ClientProfile, Era};
use super::upstream::{Reply, UpstreamError};
use super::wire::{self, Outcome};
use super::{Bridge, OpenLinks, for_client, upstream_params};

/// Rounds of one call before the bridge gives up on a server that keeps asking.
const MAX_ROUNDS: usize = 32;
/// The pause before asking again, while waiting, a server that answered at once.
const RETRY_PAUSE: Duration = Duration::from_secs(1);
/// How often a waiting call reports progress, when the client gave a progress token.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// A link opened this recently is not opened again.
const REOPEN_AFTER: Duration = Duration::from_secs(120);

/// The sign-in a call is waiting for.
struct Waiting {
    link: String,
    until: Instant,
}

/// Why a round cannot be answered: the tool result the client gets instead.
type Stop = Value;

pub(super) async fn call(bridge: &Bridge, params: Value) -> Outcome {
    let profile = bridge.profile_for(&params);
    learn_mirrors(bridge, &profile).await;
    let tool = params["name"].as_str().unwrap_or_default();
    if let Some(invalid) = bridge.upstream.left_out(tool) {
        // Not sent: the server would get a call without the headers it declared.
        return Err(wire::error(
            -32602,
            format!("grantry bridge: the tool {tool} is left out: {invalid}"),
        ));
    }
    let mut progress = Progress::of(&params);
    let mut params = params;
    let mut waiting: Option<Waiting> = None;
    let mut rounds = 0;
    // Rounds while a sign-in is awaited are bounded by `--wait`; the others by MAX_ROUNDS.
    while waiting.is_some() || rounds < MAX_ROUNDS {
        rounds += usize::from(waiting.is_none());
        let until = waiting.as_ref().map(|w| w.until);
        let sent = upstream_params(&profile, params.clone());
        let result = match send(bridge, sent, until, &mut progress).await {
            Err(UpstreamError::TimedOut) if let Some(waiting) = &waiting => {
                return Ok(not_connected_yet(&waiting.link));
            }
            Err(e) => return Ok(wire::tool_error(format!("grantry bridge: {e}"))),
            Ok(Err(error)) => return Err(error),
            Ok(Ok(result)) => result,
        };
        if result["resultType"] != "input_required" {
            return Ok(for_client(&profile, result));
        }
        if bridge.no_browser {
            return Ok(no_person_here());
        }
        if profile.era == Era::Modern && client_answers_itself(&profile, &result) {
            return Ok(result);
        }
        if let Some(until) = until {
            // Asked again while waiting: a server that does not hold the retry would be
            // asked in a tight loop.
            tokio::time::sleep_until(until.min(Instant::now() + RETRY_PAUSE)).await;
        }
        let responses = match answer_round(bridge, &profile, &result, &mut waiting).await {
            Ok(responses) => responses,
            Err(stop) => return Ok(stop),
        };
        next_round(&mut params, responses, &result["requestState"]);
    }
    Ok(wire::tool_error(format!(
        "grantry bridge: the server was still asking for input after {MAX_ROUNDS} rounds; \
         nothing more was sent"
    )))
}

/// The answer to a round under `--no-browser`: neither the link nor the question is passed
/// on, so the agent behind the client never holds a sign-in link.
fn no_person_here() -> Value {
    wire::tool_error(
        "The server needs a person to sign in or answer before this can be done, and no \
         person is here: grantry bridge runs with --no-browser, so nothing was opened or passed \
         on and nothing was done. A person connects the account from a client they use \
         themselves.",
    )
}

/// Learns which arguments tools mirror into headers, if no `tools/list` has told yet.
async fn learn_mirrors(bridge: &Bridge, profile: &ClientProfile) {
    if bridge.upstream.knows_mirrors() {
        return;
    }
    if let Err(e) = bridge.send(profile, "tools/list", json!({}), None).await {
        tracing::debug!(error = %e, "could not list the tools before a call");
    }
}

/// Sends one round; while a sign-in is awaited, reports progress if the client asked for it.
async fn send(
    bridge: &Bridge,
    params: Value,
    until: Option<Instant>,
    progress: &mut Progress,
) -> Result<Reply, UpstreamError> {
    // While the bridge reports its own waiting progress on the client's token, the server's
    // progress on that token is not passed on: the client's values must keep increasing.
    let own_progress = until.is_some() && progress.token.is_some();
    let forward = |note: Value| {
        if !(own_progress && note["method"] == "notifications/progress") {
            bridge.client.send(&note);
        }
    };
    let request = bridge
        .upstream
        .request("tools/call", params, until, &forward);
    let (Some(token), Some(_)) = (progress.token.clone(), until) else {
        return request.await;
    };
    tokio::pin!(request);
    let mut ticks = tokio::time::interval(PROGRESS_EVERY);
    loop {
        tokio::select! {
            reply = &mut request => return reply,
            _ = ticks.tick() => {
                progress.sent += 1;
                bridge.client.notify("notifications/progress", json!({
                    "progressToken": token,
                    "progress": progress.sent,
                    "message": "Waiting for the sign-in in your browser",
                }));
            }
        }
    }
}

struct Progress {
    token: Option<Value>,
    sent: u64,
}

impl Progress {
    fn of(params: &Value) -> Self {
        Self {
            token: params["_meta"].get("progressToken").cloned(),
            sent: 0,
        }
    }
}

/// A 2026-07-28 client answers the round itself unless it holds a sign-in link it cannot
/// show (it did not declare URL elicitation).
fn client_answers_itself(profile: &ClientProfile, result: &Value) -> bool {
    profile.url || !requests(result).any(|(_, request)| is_url(request))
}

fn requests(result: &Value) -> impl Iterator<Item = (&String, &Value)> {
    result["inputRequests"].as_object().into_iter().flatten()
}

fn is_url(request: &Value) -> bool {
    request["method"] == "elicitation/create" && request["params"]["mode"] == "url"
}

/// The responses to every request of one round, or the result that ends the call.
async fn answer_round(
    bridge: &Bridge,
    profile: &ClientProfile,
    result: &Value,
    waiting: &mut Option<Waiting>,
) -> Result<Map<String, Value>, Stop> {
    let mut responses = Map::new();
    for (key, request) in requests(result) {
        let response = if is_url(request) {
            sign_in(bridge, profile, &request["params"], waiting).await?
        } else if request["method"] == "elicitation/create" {
            ask(bridge, profile, &request["params"]).await?
        } else {
            let method = request["method"].as_str().unwrap_or("an unknown request");
            return Err(wire::tool_error(format!(
                "The server asked for {method}, which grantry bridge does not relay; \
                 nothing was done."
            )));
        };
        responses.insert(key.clone(), response);
    }
    if let Some(waiting) = waiting
        && Instant::now() >= waiting.until
    {
        return Err(not_connected_yet(&waiting.link));
    }
    Ok(responses)
}

/// A URL elicitation: the client shows it if it declared URL mode, else the browser opens.
async fn sign_in(
    bridge: &Bridge,
    profile: &ClientProfile,
    params: &Value,
    waiting: &mut Option<Waiting>,
) -> Result<Value, Stop> {
    let link = params["url"].as_str().unwrap_or_default();
    let url = links::check(link, bridge.upstream.is_local()).map_err(|refusal| {
        tracing::warn!(%refusal, "refused to open a link from the server");
        wire::tool_error(format!(
            "grantry bridge did not open the sign-in link the server sent: {refusal}. \
             Nothing was opened."
        ))
    })?;
    // One link per call: a server that names another one while the first is awaited gets no
    // second tab; the user is given the new link instead.
    if let Some(waiting) = waiting
        && waiting.link != url.as_str()
    {
        return Err(not_connected_yet(url.as_str()));
    }
    let message = params["message"].as_str().unwrap_or("Sign in to continue.");
    let response = if profile.url {
        // In the log too: a client may declare URL mode and show its person nothing.
        eprintln!("grantry bridge: {message} Link: {url} (the client is asked to show it)");
        if bridge.open_links == OpenLinks::Always {
            bridge.open_once(&url, message);
        }
        ask_to_open(bridge, params, &url).await?
    } else {
        bridge.open_once(&url, message);
        json!({"action": "accept"})
    };
    if response["action"] == "accept" && waiting.is_none() {
        *waiting = Some(Waiting {
            link: url.to_string(),
            until: Instant::now() + bridge.wait,
        });
    }
    Ok(response)
}

/// Asks a handshake-era client that declared URL mode to show the link.
async fn ask_to_open(bridge: &Bridge, params: &Value, url: &url::Url) -> Result<Value, Stop> {
    let id = params["elicitationId"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| bridge.next_elicitation_id());
    let question = json!({
        "mode": "url",
        "message": params["message"],
        "url": url.as_str(),
        "elicitationId": id,
    });
    client_answer(bridge, question).await
}

/// A form question, for a client that can answer it; no one answers it for the user.
async fn ask(bridge: &Bridge, profile: &ClientProfile, params: &Value) -> Result<Value, Stop> {
    let message = params["message"].as_str().unwrap_or_default();
    if !profile.form {
        return Err(wire::tool_error(format!(
            "The server needs an answer this client cannot give (\"{message}\"), so nothing \
             was done."
        )));
    }
    let mut question = params.clone();
    // Form is the default mode; a 2025-06-18 client does not know the member.
    if let Some(fields) = question.as_object_mut()
        && fields.get("mode").is_some_and(|mode| mode == "form")
    {
        fields.remove("mode");
    }
    client_answer(bridge, question).await
}

async fn client_answer(bridge: &Bridge, question: Value) -> Result<Value, Stop> {
    match bridge.client.request("elicitation/create", question).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(error)) => Err(wire::tool_error(format!(
            "The client could not answer the server's question ({}), so nothing was done.",
            error["message"].as_str().unwrap_or("no reason given")
        ))),
        Err(gone) => Err(wire::tool_error(format!("grantry bridge: {gone}"))),
    }
}

/// The retry: the same call with this round's answers and the server's state.
fn next_round(params: &mut Value, responses: Map<String, Value>, request_state: &Value) {
    let Some(fields) = params.as_object_mut() else {
        return;
    };
    fields.insert("inputResponses".into(), Value::Object(responses));
    match request_state {
        Value::String(_) => fields.insert("requestState".into(), request_state.clone()),
        _ => fields.remove("requestState"),
    };
}

/// The answer when `--wait` passes before the sign-in lands.
fn not_connected_yet(link: &str) -> Value {
    wire::tool_error(format!(
        "The account is not connected yet. Sign in here: {link}\n\
         (If no page with it appeared, open the link yourself.) Ask again once the page says \
         the account is connected."
    ))
}

impl Bridge {
    /// Opens `url` in the browser unless it was opened lately, and prints it on stderr.
    fn open_once(&self, url: &url::Url, message: &str) {
        let now = Instant::now();
        {
            let mut opened = self.opened.lock().expect("opened lock is never poisoned");
            opened.retain(|_, at| now.duration_since(*at) < REOPEN_AFTER);
            if opened.insert(url.to_string(), now).is_some() {
                return;
            }
        }
        eprintln!("grantry bridge: {message} Opening {url}");
        if let Err(e) = links::open(url, self.open_with.as_deref()) {
            tracing::warn!("{e}; open the link yourself");
        }
    }

    fn next_elicitation_id(&self) -> String {
        format!("grantry-bridge-{}", rand::random::<u64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_carries_the_answers_and_the_latest_state_only() {
        let mut params = json!({"name": "list_invoices", "requestState": "old"});
        let mut answers = Map::new();
        answers.insert("sign_in".into(), json!({"action": "accept"}));
        next_round(&mut params, answers, &json!("new"));
        assert_eq!(params["requestState"], "new");
        assert_eq!(params["inputResponses"]["sign_in"]["action"], "accept");
        next_round(&mut params, Map::new(), &Value::Null);
        assert!(params.get("requestState").is_none());
    }

    #[test]
    fn a_modern_client_without_url_mode_does_not_answer_a_sign_in() {
        let sign_in = json!({"resultType": "input_required", "inputRequests": {"a": {
            "method": "elicitation/create", "params": {"mode": "url", "url": "https://x/"}}}});
        let form = json!({"resultType": "input_required", "inputRequests": {"a": {
            "method": "elicitation/create", "params": {"mode": "form", "message": "?"}}}});
        let mut profile = ClientProfile::from_meta(&json!({}));
        profile.form = true;
        assert!(!client_answers_itself(&profile, &sign_in));
        assert!(client_answers_itself(&profile, &form));
        profile.url = true;
        assert!(client_answers_itself(&profile, &sign_in));
    }
}
