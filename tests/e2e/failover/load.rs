//! The load a failover run puts on three replicas: people who each sign in (the MCP call that
//! hands out the link, the login at the identity provider, the connect page, the fake Xero,
//! the callback), take the client's retry, then use the connection (two calls at once, a
//! few times, so the short-lived tokens are refreshed while others sign in). Every step that
//! fails is written down with when it failed; a sign-in whose page said "connected" is
//! written down as a promise to keep.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::mcp::url_and_form;
use crate::support::oidc::{access_token, provider};
use crate::support::{Browser, Mcp};

/// A person who signed in, and the access token their client calls with.
#[derive(Clone)]
pub struct Person {
    pub name: String,
    pub token: String,
    /// When their page said "connected", in seconds since the start.
    pub connected_at: f64,
}

/// What the load saw.
#[derive(Default)]
pub struct Record {
    /// (seconds since the start, what failed).
    pub errors: Mutex<Vec<(f64, String)>>,
    /// People whose sign-in ended on the "connected" page.
    pub connected: Mutex<Vec<Person>>,
    /// Steps that succeeded (each MCP call and each sign-in counts one).
    pub steps: Mutex<Vec<f64>>,
}

impl Record {
    fn failed(&self, started: Instant, what: String) {
        let at = started.elapsed().as_secs_f64();
        self.errors.lock().unwrap().push((at, what));
    }

    fn succeeded(&self, started: Instant) {
        let at = started.elapsed().as_secs_f64();
        self.steps.lock().unwrap().push(at);
    }
}

/// Where the load goes: the balancer in front of the replicas.
pub struct Target {
    pub public: String,
    pub started: Instant,
    pub until: Instant,
}

impl Target {
    fn mcp_url(&self) -> String {
        format!("{}/mcp", self.public)
    }
}

/// One worker: people, one after another, until `target.until`.
pub async fn worker(target: &Target, worker: usize, record: &Record) {
    let mut n = 0;
    while Instant::now() < target.until {
        n += 1;
        let name = crate::support::oidc::user(&format!("w{worker}n{n}"));
        let token = access_token(&provider().issuer, &name, &target.mcp_url(), "test-client").await;
        let mut person = Person {
            name,
            token,
            connected_at: 0.0,
        };
        match within(sign_in(target, &person)).await {
            Ok(()) => {
                record.succeeded(target.started);
                person.connected_at = target.started.elapsed().as_secs_f64();
                record.connected.lock().unwrap().push(person.clone());
            }
            Err(why) => {
                record.failed(target.started, format!("sign-in: {why}"));
                continue;
            }
        }
        let mcp = Mcp::with_bearer(target.mcp_url(), person.token.clone());
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(500)).await;
            let (a, b) = tokio::join!(within(list_invoices(&mcp)), within(list_invoices(&mcp)));
            for outcome in [a, b] {
                match outcome {
                    Ok(()) => record.succeeded(target.started),
                    Err(why) => record.failed(target.started, format!("tool call: {why}")),
                }
            }
        }
    }
}

/// A step a client gives up on after 30 s, as a person would.
pub async fn within(step: impl Future<Output = Result<(), String>>) -> Result<(), String> {
    tokio::time::timeout(Duration::from_secs(30), step)
        .await
        .unwrap_or_else(|_| Err("no answer within 30 s".into()))
}

/// A `list_invoices` call that completes with invoices.
pub async fn list_invoices(mcp: &Mcp) -> Result<(), String> {
    let answer = mcp
        .call_tool("list_invoices", json!({"provider": "xero"}), url_and_form())
        .await;
    let result = answer
        .body
        .get("result")
        .ok_or_else(|| brief(&answer.body))?;
    if result["resultType"] != "complete" || result["isError"] != false {
        return Err(brief(result));
    }
    Ok(())
}

/// The whole sign-in, from the call that needs it to the retry that completes.
async fn sign_in(target: &Target, person: &Person) -> Result<(), String> {
    let mcp = Mcp::with_bearer(target.mcp_url(), person.token.clone());
    let args = json!({"provider": "xero"});
    let first = mcp
        .call_tool("list_invoices", args.clone(), url_and_form())
        .await;
    let round = first.body.get("result").ok_or_else(|| brief(&first.body))?;
    if round["resultType"] != "input_required" {
        return Err(format!("first call: {}", brief(round)));
    }
    let (link, state, key) = first.sign_in_round();
    browser_sign_in(&link, &person.name).await?;
    let retry = mcp
        .retry(
            "list_invoices",
            args,
            json!({ key: {"action": "accept"} }),
            &state,
        )
        .await;
    match retry.body.get("result") {
        Some(r) if r["resultType"] == "complete" && r["isError"] == false => Ok(()),
        Some(r) => Err(format!("retry: {}", brief(r))),
        None => Err(format!("retry: {}", brief(&retry.body))),
    }
}

/// The browser's part: login at the issuer, the connect page, the fake Xero's consent, the
/// callback; `Ok` only when it ends on the "connected" page.
async fn browser_sign_in(link: &str, name: &str) -> Result<(), String> {
    let browser = Browser::new();
    let page = browser.open_signing_in_as(link, name).await;
    if page.status != StatusCode::OK || !page.body.contains("<form") {
        return Err(format!("connect page: HTTP {}", page.status));
    }
    let sent = browser.submit(&page.form()).await;
    let authorize = sent
        .location()
        .ok_or_else(|| format!("continue: HTTP {}", sent.status))?;
    let callback = browser
        .get(&authorize)
        .await
        .location()
        .ok_or("the fake Xero did not send the browser back")?;
    let landed = browser.get(&callback).await;
    let Some(next) = landed.location() else {
        return Err(format!("callback: HTTP {}", landed.status));
    };
    let next = url::Url::parse(&callback).unwrap().join(&next).unwrap();
    let done = browser.get(next.as_str()).await;
    if done.status == StatusCode::OK && done.url.contains("/connected?provider=") {
        Ok(())
    } else {
        Err(format!(
            "callback ended on {} (HTTP {})",
            done.url, done.status
        ))
    }
}

/// A short description of a failure, never a token: the error message or the text shown.
fn brief(value: &Value) -> String {
    let text = value["error"]["message"]
        .as_str()
        .or(value["content"][0]["text"].as_str())
        .or(value["resultType"].as_str())
        .unwrap_or("no JSON-RPC answer");
    text.chars().take(120).collect()
}
