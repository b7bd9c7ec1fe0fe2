//! `list_invoices` through every provider adapter, against local fakes of each provider's
//! OAuth server and invoice API (support::fake_providers): connect, the post-connect account
//! step, status filters, pagination to the end, amounts, currencies and dates.

use std::collections::HashSet;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::fake_providers::{Fake, PROVIDERS, open_count};
use crate::support::mcp::url_and_form;
use crate::support::{Browser, Mcp, Server};

/// grantry with every fake provider in its catalog, `default` first.
pub async fn grantry_with_fakes(
    default: &str,
    extra: &[&str],
) -> (Server, Fake, tempfile::TempDir) {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog(default)).unwrap();
    let mut args = vec!["--providers", catalog.to_str().unwrap()];
    args.extend_from_slice(extra);
    (Server::start(&args).await, fake, dir)
}

/// Connects `provider` for the MCP client's user: the first round, the browser through the
/// fake provider (which approves at once), the callback.
pub async fn connect(server: &Server, mcp: &Mcp, provider: &str) {
    let args = json!({"provider": provider});
    let first = mcp
        .call_tool("list_invoices", args.clone(), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();
    let browser = Browser::new();
    let authorize = browser.continue_at(&link).await;
    assert!(
        authorize.contains(&format!("/{provider}/oauth/authorize?")),
        "{authorize}"
    );
    let back = browser.get(&authorize).await;
    let callback = back.location().expect("the fake provider redirects back");
    let landed = browser.get(&callback).await;
    assert_eq!(
        landed.status,
        StatusCode::SEE_OTHER,
        "{provider}: {}",
        landed.body
    );
    let retry = mcp
        .retry(
            "list_invoices",
            args,
            json!({ key: {"action": "accept"} }),
            &state,
        )
        .await;
    assert_eq!(retry.result()["resultType"], "complete", "{}", retry.raw);
    let _ = server;
}

/// Every page of `status` invoices from `provider`.
/// Gives the caller's connection at `provider` write access as a person does when a tool
/// first writes (incremental consent): `void_invoice` of no invoice asks for it in a sign-in
/// round, the browser signs in (at the demo, approving everything), the retry runs the tool.
pub async fn grant_write_access(mcp: &Mcp, provider: &str) {
    let args = json!({"provider": provider, "invoice_id": "no-such-invoice"});
    let first = mcp
        .call_tool("void_invoice", args.clone(), url_and_form())
        .await;
    let (link, state, key) = first.sign_in_round();
    let browser = Browser::new();
    if provider == "demo" {
        browser.sign_in(&link, true).await;
    } else {
        let authorize = browser.continue_at(&link).await;
        let back = browser.get(&authorize).await;
        browser.get(&back.location().unwrap()).await;
    }
    let retry = mcp
        .retry(
            "void_invoice",
            args,
            json!({ &key: {"action": "accept"} }),
            &state,
        )
        .await;
    assert!(
        retry.result()["inputRequests"].get(&key).is_none(),
        "write access granted: {}",
        retry.raw
    );
}

async fn all_pages(mcp: &Mcp, provider: &str, status: &str) -> Vec<Value> {
    let mut invoices = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let mut args = json!({"provider": provider, "status": status});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let answer = mcp.call_tool("list_invoices", args, url_and_form()).await;
        let result = answer.result();
        assert_eq!(result["isError"], false, "{}", answer.raw);
        let page = &result["structuredContent"];
        invoices.extend(page["invoices"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return invoices,
        }
    }
    panic!("{provider}: pagination did not end");
}

#[tokio::test]
async fn every_adapter_lists_every_page_with_normalized_fields() {
    let (server, fake, _dir) = grantry_with_fakes("stripe", &[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let currencies = [
        ("stripe", "EUR"),
        ("xero", "GBP"),
        ("quickbooks", "USD"),
        ("freshbooks", "CAD"),
        ("zoho", "INR"),
        ("sage", "GBP"),
    ];
    for (provider, n) in PROVIDERS {
        connect(&server, &mcp, provider).await;
        let all = all_pages(&mcp, provider, "all").await;
        assert_eq!(all.len(), n, "{provider}: every invoice, every page");
        let ids: HashSet<&str> = all.iter().map(|i| i["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), n, "{provider}: no invoice twice");
        let open = all_pages(&mcp, provider, "open").await;
        assert_eq!(open.len(), open_count(n), "{provider}: open ones");
        assert!(open.iter().all(|i| i["status"] == "open"), "{provider}");
        let paid = all_pages(&mcp, provider, "paid").await;
        assert_eq!(
            paid.len(),
            (1..=n).filter(|i| i % 3 == 1).count(),
            "{provider}: paid"
        );
        // Invoice 3 is open: 30.03 in the provider's currency, issued 2026-01-04, due 02-04.
        let third = open
            .iter()
            .find(|i| i["amount_minor"] == 3003)
            .unwrap_or_else(|| panic!("{provider}: invoice 3 in {open:?}"));
        let currency = currencies.iter().find(|(p, _)| *p == provider).unwrap().1;
        assert_eq!(third["currency"], currency, "{provider}");
        assert_eq!(third["issue_date"], "2026-01-04", "{provider}");
        assert_eq!(
            third["customer"]
                .as_str()
                .unwrap()
                .split(' ')
                .take(2)
                .collect::<Vec<_>>(),
            ["Customer", "3"],
            "{provider}"
        );
        if provider != "stripe" {
            assert_eq!(third["due_date"], "2026-02-04", "{provider}");
        }
    }
    // The account picked after connect, by name; never a token.
    let listed = mcp
        .call_tool("list_connections", json!({}), url_and_form())
        .await;
    let connections = listed.result()["structuredContent"]["connections"].clone();
    let accounts: Vec<(String, Value)> = connections
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["provider"].as_str().unwrap().to_owned(),
                c["account"].clone(),
            )
        })
        .collect();
    for (provider, account) in [
        ("xero", json!("Demo Company (UK)")),
        ("quickbooks", json!("Sandbox Company_US_1")),
        ("freshbooks", json!("Acme Design")),
        ("zoho", json!("Zillium Inc")),
        ("sage", json!("Acme Ltd")),
        ("stripe", Value::Null),
    ] {
        assert!(
            accounts.contains(&(provider.to_owned(), account.clone())),
            "{provider}: {accounts:?}"
        );
    }
    for token in fake.issued_tokens() {
        assert!(!listed.raw.contains(&token), "no token in list_connections");
    }
    // With several connected, a call naming none is asked to choose.
    let unnamed = mcp
        .call_tool("list_invoices", json!({}), url_and_form())
        .await;
    assert_eq!(unnamed.result()["isError"], true);
    assert!(
        unnamed.result()["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("provider")
    );
}

#[tokio::test]
async fn a_busy_provider_is_retried_briefly_then_reported_as_retryable() {
    let (server, fake, _dir) = grantry_with_fakes("xero", &[]).await;
    let mcp = Mcp::new(server.mcp_url());
    connect(&server, &mcp, "xero").await;
    let list = || mcp.call_tool("list_invoices", json!({"provider": "xero"}), url_and_form());
    // Retry-After 1: grantry waits and retries within the call.
    fake.set(|s| s.busy = vec![1]);
    let answer = list().await;
    assert_eq!(answer.result()["isError"], false, "{}", answer.raw);
    // Retry-After 30: longer than a call should wait; a retryable error saying when.
    fake.set(|s| s.busy = vec![30]);
    let answer = list().await;
    assert_eq!(answer.result()["isError"], true);
    let text = answer.result()["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("try again in 30 seconds"), "{text}");
    assert_eq!(
        fake.counters
            .busy_answers
            .load(std::sync::atomic::Ordering::SeqCst),
        2
    );
}

#[tokio::test]
async fn a_refused_access_token_gets_one_refresh_and_one_retry() {
    let (server, fake, _dir) = grantry_with_fakes("sage", &[]).await;
    let mcp = Mcp::new(server.mcp_url());
    connect(&server, &mcp, "sage").await;
    fake.revoke_access_tokens();
    let answer = mcp
        .call_tool("list_invoices", json!({"provider": "sage"}), url_and_form())
        .await;
    assert_eq!(answer.result()["isError"], false, "{}", answer.raw);
    assert_eq!(
        fake.counters
            .refreshes
            .load(std::sync::atomic::Ordering::SeqCst),
        1
    );
}

#[tokio::test]
async fn a_zoho_account_in_another_data_centre_is_refused_with_its_name() {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    // This deployment's Zoho entry is at "localhost"; the fake says the account is at 127.0.0.1.
    let text = fake.catalog("zoho").replace(
        &format!("token_url = \"{}/zoho", fake.base),
        &format!(
            "token_url = \"{}/zoho",
            fake.base.replace("127.0.0.1", "localhost")
        ),
    );
    std::fs::write(&catalog, text).unwrap();
    let server = Server::start(&["--providers", catalog.to_str().unwrap()]).await;
    let mcp = Mcp::new(server.mcp_url());
    let (link, _, _) = mcp
        .call_tool("list_invoices", json!({"provider": "zoho"}), url_and_form())
        .await
        .sign_in_round();
    let browser = Browser::new();
    let authorize = browser.continue_at(&link).await;
    let callback = browser.get(&authorize).await.location().unwrap();
    let page = browser.get(&callback).await;
    assert_eq!(page.status, StatusCode::BAD_GATEWAY);
    assert!(
        page.body.contains("this Zoho account lives at 127.0.0.1"),
        "{}",
        page.body
    );
    assert_eq!(server.count_rows("grants").await, 0, "nothing stored");
}
