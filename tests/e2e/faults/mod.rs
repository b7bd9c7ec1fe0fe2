//! Store faults: what a client and a browser see while the store is down or slow, and that
//! grantry recovers by itself. Each test runs its own server, so stopping it touches nothing
//! else.

mod postgres;
pub(crate) mod redis;

use std::time::Duration;

use serde_json::json;

use crate::support::Mcp;
use crate::support::mcp::{Answer, url_and_form};

/// The first `list_invoices` result (not a JSON-RPC error) within about five seconds.
async fn answers_again(mcp: &Mcp) -> Option<Answer> {
    for _ in 0..50 {
        let answer = mcp
            .call_tool("list_invoices", json!({}), url_and_form())
            .await;
        if answer.body.get("result").is_some() {
            return Some(answer);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}
