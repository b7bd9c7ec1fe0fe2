//! A person signed in to grantry under `oidc` identity (tests/oidc): a bearer token got
//! through one registered MCP client, and a browser that signs in at the issuer when a
//! connect link asks.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::mcp::{Answer, url_and_form};
use super::oidc::{access_token, provider, user};
use super::{Browser, Mcp, Server};
use grantry::identity::Principal;

pub struct Person {
    pub subject: String,
    pub mcp: Mcp,
    pub browser: Browser,
}

impl Person {
    /// `name`, calling through `test-client`.
    pub async fn new(server: &Server, name: &str) -> Person {
        Self::through(server, name, "test-client").await
    }

    /// `name`, calling through the registered client `client_id`.
    pub async fn through(server: &Server, name: &str, client_id: &str) -> Person {
        let subject = user(name);
        let token = access_token(&provider().issuer, &subject, &server.mcp_url(), client_id).await;
        Person {
            mcp: Mcp::with_bearer(server.mcp_url(), token),
            browser: Browser::new(),
            subject,
        }
    }

    /// The same person, calling through another registered client.
    pub async fn also_through(&self, server: &Server, client_id: &str) -> Mcp {
        let token = access_token(
            &provider().issuer,
            &self.subject,
            &server.mcp_url(),
            client_id,
        )
        .await;
        Mcp::with_bearer(server.mcp_url(), token)
    }

    pub fn principal(&self) -> Principal {
        Principal {
            issuer: provider().issuer.clone(),
            subject: self.subject.clone(),
        }
    }

    /// `--user ISSUER SUBJECT`.
    pub fn user_flag(&self) -> [&str; 3] {
        ["--user", &provider().issuer, &self.subject]
    }

    /// Connects `at` the way a person does: the tool asks, the browser signs in, the retry
    /// completes.
    pub async fn connect(&self, at: &str) {
        let args = json!({"provider": at});
        let first = self
            .mcp
            .call_tool("list_invoices", args.clone(), url_and_form())
            .await;
        let (link, state, key) = first.sign_in_round();
        let page = self.browser.open_signing_in_as(&link, &self.subject).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.body);
        let authorize = self.browser.continue_at(&link).await;
        let back = self.browser.get(&authorize).await;
        let landed = self.browser.get(&back.location().unwrap()).await;
        assert_eq!(
            landed.status,
            StatusCode::SEE_OTHER,
            "{at}: {}",
            landed.body
        );
        let accepted = json!({ key: {"action": "accept"} });
        let retry = self
            .mcp
            .retry("list_invoices", args, accepted, &state)
            .await;
        assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);
    }

    pub async fn lists_invoices_at(&self, at: &str) -> bool {
        completes(&list_invoices(&self.mcp, at).await)
    }
}

/// `list_invoices` at `at`, through `mcp`.
pub async fn list_invoices(mcp: &Mcp, at: &str) -> Answer {
    mcp.call_tool("list_invoices", json!({"provider": at}), url_and_form())
        .await
}

/// Whether a call completed without a tool error.
pub fn completes(answer: &Answer) -> bool {
    let result: &Value = answer.result();
    result["resultType"] == "complete" && result["isError"] != true
}
