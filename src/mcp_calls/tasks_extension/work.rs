//! What a task carries, sealed in the store: the call it runs for, the round it waits on (the
//! round's `requestState`, what it asks under which key, what the client answered), and how it
//! ended. Pure values: [`crate::mcp_calls::tasks_extension::Tasks`] runs the steps.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::identity::McpClient;
use crate::mcp_calls::registry::Listed;
use crate::mcp_calls::results::{CallAnswer, CallResult, InputRequired};
use crate::mcp_calls::rounds::card::task_waits_on_card;
use crate::mcp_calls::rounds::{Patience, Retry};
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::providers::ProviderId;
use crate::tasks::TaskStatus;
use crate::tools::Tool;

/// A task's work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Work {
    /// The tool's name (one of grantry's own, or an extension's).
    pub(crate) tool: String,
    pub(crate) arguments: Map<String, Value>,
    /// The MCP client the call came through, as stored with a connection's use.
    pub(crate) client: Option<String>,
    /// What the client declared on the call that made the task: its steps run as that call.
    pub(crate) capabilities: Capabilities,
    pub(crate) round: Option<Round>,
    /// For a host that renders the connect card and shows no link: the provider its person
    /// connects through the card, while the round waits on that sign-in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) card: Option<ProviderId>,
    /// Rounds asked so far; each round's keys carry its number, so no key is asked twice.
    pub(crate) rounds: u32,
    pub(crate) end: Option<End>,
}

/// The round a task waits on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Round {
    request_state: Option<String>,
    /// The task's key for each request, with what it asks.
    asked: BTreeMap<String, Asked>,
    /// The client's answers, by the task's keys.
    answers: BTreeMap<String, Value>,
}

/// One request of a round: its key in the call's rounds, and the request as the wire has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Asked {
    key: String,
    request: Value,
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) enum End {
    /// The tool's result (a tool error too), as `CallToolResult` with its `resultType`.
    Completed(Value),
    /// A JSON-RPC error object: the call failed as a protocol request.
    Failed(Value),
    Cancelled,
}

impl Work {
    pub(super) fn new(
        tool: &str,
        arguments: Map<String, Value>,
        client: Option<&McpClient>,
        capabilities: Capabilities,
    ) -> Self {
        Self {
            tool: tool.to_owned(),
            arguments,
            client: client.map(McpClient::stored),
            capabilities,
            round: None,
            card: None,
            rounds: 0,
            end: None,
        }
    }

    /// The tool, as a call names it: one of grantry's own, or else the extension's (which
    /// refuses a name it lacks).
    pub(super) fn listed(&self) -> Listed {
        Tool::ALL
            .into_iter()
            .find(|t| t.name() == self.tool)
            .map_or_else(|| Listed::Added(self.tool.as_str().into()), Listed::Own)
    }

    /// The client as a call names it.
    pub(super) fn client(&self) -> Option<McpClient> {
        self.client.as_deref().and_then(McpClient::from_stored)
    }

    /// Where the task stands.
    pub(super) fn status(&self) -> TaskStatus {
        match (&self.end, &self.round) {
            (Some(End::Completed(_)), _) => TaskStatus::Completed,
            (Some(End::Failed(_)), _) => TaskStatus::Failed,
            (Some(End::Cancelled), _) => TaskStatus::Cancelled,
            // The card, not the client, takes the person through the sign-in.
            (None, Some(_)) if self.waits_on_card() => TaskStatus::Working,
            (None, Some(round)) if round.outstanding().next().is_some() => {
                TaskStatus::InputRequired
            }
            (None, _) => TaskStatus::Working,
        }
    }

    /// Takes the call's answer: its result, or its next round. A round asking what the
    /// current one asks (a sign-in still pending) keeps its keys and answers.
    pub(super) fn take(&mut self, answer: CallAnswer) {
        match answer {
            CallAnswer::Complete(result) => self.complete(result),
            CallAnswer::InputRequired(next) => self.ask(next),
        }
    }

    fn complete(&mut self, result: CallResult) {
        let result =
            serde_json::to_value(CallAnswer::Complete(result)).expect("a call result serializes");
        self.end = Some(End::Completed(result));
        self.round = None;
    }

    /// A new round. The same round asked again (a sign-in still pending) changes nothing:
    /// its first state holds as long as the task lives, and a poll then writes nothing.
    pub(super) fn ask(&mut self, next: InputRequired) {
        let asked: BTreeMap<String, Value> = next
            .input_requests
            .into_iter()
            .map(|(key, request)| {
                let request = serde_json::to_value(request).expect("requests serialize");
                (key, request)
            })
            .collect();
        if self.round.as_ref().is_some_and(|round| round.asks(&asked)) {
            return;
        }
        self.rounds += 1;
        // A new round: whose sign-in the card makes, if any, is read again for it.
        self.card = None;
        let number = self.rounds;
        self.round = Some(Round {
            request_state: next.request_state,
            asked: asked
                .into_iter()
                .map(|(key, request)| (format!("{key}-{number}"), Asked { key, request }))
                .collect(),
            answers: BTreeMap::new(),
        });
    }

    /// Ends the work with a tool error, in place of an answer too large to keep: sealed, it
    /// came to `sealed` bytes, over `cap`. What only further steps needed goes with it.
    pub(super) fn too_large(&mut self, sealed: usize, cap: usize) {
        self.arguments.clear();
        let message = format!(
            "The tool ran, but its answer is too large for a task to keep ({} KiB, at most {} \
             KiB). Ask for less at a time (a narrower status, one account).",
            sealed / 1024,
            cap / 1024
        );
        self.complete(CallResult::text(message, true));
    }

    /// The call failed as a request.
    pub(super) fn fail(&mut self, error: &RpcError) {
        let error = serde_json::to_value(error).expect("an error serializes");
        self.end = Some(End::Failed(error));
        self.round = None;
    }

    pub(super) fn cancel(&mut self) {
        self.end = Some(End::Cancelled);
        self.round = None;
    }

    /// Records the client's answers to requests still outstanding (others are ignored, as
    /// the extension asks); tells whether it took any.
    pub(super) fn answer(&mut self, responses: &Map<String, Value>) -> bool {
        let Some(round) = &mut self.round else {
            return false;
        };
        let open: Vec<String> = round.outstanding().map(|(key, _)| key.clone()).collect();
        let mut took = false;
        for key in open {
            if let Some(response) = responses.get(&key) {
                round.answers.insert(key, response.clone());
                took = true;
            }
        }
        took
    }

    /// Whether the round waits on a sign-in (a URL request): something that ends outside
    /// the client, so each poll looks how it stands.
    pub(super) fn waits_on_sign_in(&self) -> bool {
        self.url_request().is_some()
    }

    /// The round's URL request (its sign-in), if it has one.
    fn url_request(&self) -> Option<&Value> {
        let round = self.round.as_ref()?;
        round
            .asked
            .values()
            .map(|a| &a.request)
            .find(|request| request["params"]["mode"] == "url")
    }

    /// Whether the round is a sign-in its host makes through the card.
    pub(super) fn waits_on_card(&self) -> bool {
        self.card.is_some() && self.waits_on_sign_in()
    }

    /// The round's `requestState`, if it has one.
    pub(super) fn round_state(&self) -> Option<&str> {
        self.round.as_ref()?.request_state.as_deref()
    }

    /// Whether every request of the round has its answer.
    pub(super) fn all_answered(&self) -> bool {
        self.round
            .as_ref()
            .is_some_and(|round| round.outstanding().next().is_none())
    }

    /// The retry the client would have sent for the round: its state and answers under the
    /// call's own keys; never held (the task's client polls instead).
    pub(super) fn retry(&self) -> Retry {
        let Some(round) = &self.round else {
            return Retry::default();
        };
        let responses = round
            .answers
            .iter()
            .filter_map(|(key, answer)| {
                let asked = round.asked.get(key)?;
                Some((asked.key.clone(), answer.clone()))
            })
            .collect();
        Retry {
            request_state: round.request_state.clone(),
            responses: Some(responses),
            patience: Patience::Look,
        }
    }

    /// The requests still waiting for an answer, by the task's keys, as `inputRequests`.
    pub(super) fn input_requests(&self) -> Map<String, Value> {
        self.round
            .iter()
            .flat_map(Round::outstanding)
            .map(|(key, asked)| (key.clone(), asked.request.clone()))
            .collect()
    }

    /// What a person reads of where the task stands.
    pub(super) fn status_message(&self) -> Option<String> {
        if let (Some(provider), true) = (&self.card, self.waits_on_card()) {
            let link = self.url_request()?["params"]["url"].as_str()?;
            return Some(task_waits_on_card(provider, link));
        }
        let round = self.round.as_ref()?;
        match round.outstanding().next() {
            Some((_, asked)) => asked.request["params"]["message"]
                .as_str()
                .map(str::to_owned),
            None => Some("Waiting for the sign-in to finish.".to_owned()),
        }
    }
}

impl Round {
    fn outstanding(&self) -> impl Iterator<Item = (&String, &Asked)> {
        self.asked
            .iter()
            .filter(|(key, _)| !self.answers.contains_key(*key))
    }

    /// Whether this round asks exactly `asked` (by the call's keys).
    fn asks(&self, asked: &BTreeMap<String, Value>) -> bool {
        self.asked.len() == asked.len()
            && self
                .asked
                .values()
                .all(|a| asked.get(&a.key) == Some(&a.request))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mcp_calls::results::{Elicitation, InputRequest};

    fn sign_in(url: &str, state: &str) -> InputRequired {
        let link = Elicitation::Url {
            message: "Connect Demo.".into(),
            url: url.into(),
        };
        InputRequired::one(
            "connect_demo",
            InputRequest::Elicit(link),
            Some(state.into()),
        )
    }

    fn work() -> Work {
        Work::new("list_invoices", Map::new(), None, Capabilities::default())
    }

    #[test]
    fn a_card_hosts_sign_in_is_the_cards_to_make_and_the_task_says_so() {
        let mut work = work();
        work.ask(sign_in("https://g.example/connect/t1", "s1"));
        assert_eq!(work.status(), TaskStatus::InputRequired, "a link client's");
        work.card = Some("demo".parse().unwrap());
        assert_eq!(
            work.status(),
            TaskStatus::Working,
            "no link for a card host"
        );
        let message = work.status_message().unwrap();
        assert!(
            message.contains(r#"connect_account with {"provider":"demo"}"#),
            "{message}"
        );
        assert!(
            message.contains("https://g.example/connect/t1"),
            "{message}"
        );
        work.take(CallAnswer::Complete(CallResult::text("5 invoices", false)));
        assert_eq!(work.status(), TaskStatus::Completed);
        assert_eq!(work.status_message(), None);
    }

    #[test]
    fn a_pending_sign_in_keeps_its_key_and_a_new_link_gets_a_new_one() {
        let mut work = work();
        work.ask(sign_in("https://g/connect/a", "s1"));
        assert_eq!(work.status(), TaskStatus::InputRequired);
        assert!(work.waits_on_sign_in());
        let keys: Vec<String> = work.input_requests().keys().cloned().collect();
        assert_eq!(keys, ["connect_demo-1"]);
        assert_eq!(work.status_message().as_deref(), Some("Connect Demo."));

        assert!(work.answer(&Map::from_iter([
            ("connect_demo-1".into(), json!({"action": "accept"})),
            ("never-asked".into(), json!({"action": "accept"})),
        ])));
        assert_eq!(
            work.status(),
            TaskStatus::Working,
            "accepted: the sign-in runs"
        );
        assert!(work.input_requests().is_empty());
        let retry = work.retry();
        assert_eq!(
            retry.responses.unwrap(),
            Map::from_iter([("connect_demo".into(), json!({"action": "accept"}))]),
            "the call's own key, and only what was asked"
        );
        assert_eq!(retry.patience, Patience::Look);

        work.ask(sign_in("https://g/connect/a", "s2"));
        assert_eq!(work.rounds, 1, "the same link: the same round");
        assert_eq!(work.retry().request_state.as_deref(), Some("s1"));
        assert_eq!(work.status(), TaskStatus::Working, "its answer kept");

        work.ask(sign_in("https://g/connect/b", "s3"));
        let keys: Vec<String> = work.input_requests().keys().cloned().collect();
        assert_eq!(keys, ["connect_demo-2"], "a new link is a new request");
        assert!(!work.answer(&Map::from_iter([(
            "connect_demo-1".into(),
            json!({"action": "accept"})
        )])));
    }

    #[test]
    fn an_end_is_final_and_carries_what_the_wire_needs() {
        let mut work = work();
        work.ask(sign_in("https://g/connect/a", "s1"));
        work.take(CallAnswer::Complete(CallResult::text("done", false)));
        assert_eq!(work.status(), TaskStatus::Completed);
        let Some(End::Completed(result)) = &work.end else {
            panic!("completed");
        };
        assert_eq!(result["resultType"], "complete", "ext-tasks checks it");
        assert!(work.input_requests().is_empty() && !work.waits_on_sign_in());

        let mut failed = self::work();
        failed.fail(&RpcError::invalid_request_state());
        assert_eq!(failed.status(), TaskStatus::Failed);
        let Some(End::Failed(error)) = &failed.end else {
            panic!("failed");
        };
        assert_eq!(error["code"], -32602);

        let mut cancelled = self::work();
        cancelled.cancel();
        assert_eq!(cancelled.status(), TaskStatus::Cancelled);
    }

    #[test]
    fn an_answer_too_large_to_keep_ends_as_a_tool_error_that_says_so() {
        let mut work = work();
        work.arguments.insert("status".into(), json!("all"));
        work.ask(sign_in("https://g/connect/a", "s1"));
        work.too_large(3 * 1024 * 1024, 2 * 1024 * 1024);
        assert_eq!(work.status(), TaskStatus::Completed);
        assert!(work.arguments.is_empty() && work.round.is_none());
        let Some(End::Completed(result)) = &work.end else {
            panic!("completed");
        };
        assert_eq!(result["isError"], true, "{result}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("3072 KiB, at most 2048 KiB"), "{text}");
    }
}
