//! `/connections`: the person sees what they connected, reconnects it (same connection id)
//! and disconnects it after a confirmation step; a forged POST (no form token, another
//! origin, an id that is not theirs) changes nothing. The `dev` identity here; another user
//! under `oidc` is in `oidc::browser`.

use std::sync::atomic::Ordering;

use reqwest::StatusCode;

use crate::adapters::connect;
use crate::support::fake_providers::Fake;
use crate::support::{Browser, Mcp, Server, servers};

/// How many connections `list_connections` shows.
async fn count(mcp: &Mcp) -> usize {
    mcp.connections().await["connections"]
        .as_array()
        .unwrap()
        .len()
}

/// The href of the link whose text is `words`.
pub fn link_to(body: &str, words: &str) -> String {
    let end = body.find(&format!(">{words}</a>")).expect(words);
    let start = body[..end].rfind("href=\"").unwrap() + "href=\"".len();
    let href = &body[start..end];
    href[..href.find('"').unwrap()].replace("&#x2f;", "/")
}

/// grantry on `store` with the fake Xero as its provider, and Xero connected once (the
/// first organisation) for the MCP client's user.
pub async fn connected_to_xero(store: &[String]) -> (Server, Fake, Mcp) {
    let fake = Fake::start().await;
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog("xero")).unwrap();
    let mut args = servers::as_strs(store);
    args.extend(["--providers", catalog.to_str().unwrap()]);
    // The catalog is read at start: the file may go once grantry runs.
    let server = Server::start(&args).await;
    let mcp = Mcp::new(server.mcp_url());
    connect(&server, &mcp, "xero").await;
    (server, fake, mcp)
}

async fn the_page_lists_reconnects_and_disconnects(store: &[String]) {
    let (server, fake, mcp) = connected_to_xero(store).await;
    let before = mcp.connections().await;
    let id = before["connections"][0]["connection_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(before["manage_at"], format!("{}/connections", server.base));

    // The page: the account, its access and state, a way to reconnect and to disconnect.
    let browser = Browser::new();
    let page = browser.get(&format!("{}/connections", server.base)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    for shown in [
        "Xero: Demo Company (UK)",
        "Working",
        "Access",
        "Connected since",
        "Last used",
    ] {
        assert!(page.body.contains(shown), "{shown} in {}", page.body);
    }
    let issued = fake.issued_tokens();
    assert!(!issued.is_empty());
    for token in issued {
        assert!(!page.body.contains(&token), "no token on the page");
    }
    // A page on another site that rebinds its name to grantry's address reads nothing.
    let rebound = format!(
        "rebound.attacker.example:{}",
        server.base.rsplit(':').next().unwrap()
    );
    let read = browser
        .get_with(
            &format!("{}/connections", server.base),
            &[("host", rebound.as_str())],
        )
        .await;
    assert_eq!(
        read.status,
        StatusCode::MISDIRECTED_REQUEST,
        "{}",
        read.body
    );
    assert!(!read.body.contains("Xero"), "{}", read.body);

    // Reconnect: a fresh sign-in for the same connection.
    let reconnect = link_to(&page.body, "Reconnect Xero (Demo Company (UK))");
    let authorize = browser.continue_at(&reconnect).await;
    let callback = browser.get(&authorize).await.location().unwrap();
    let landed = browser.get(&callback).await;
    assert_eq!(landed.status, StatusCode::SEE_OTHER, "{}", landed.body);
    assert!(landed.location().unwrap().contains("/connected"));
    let again = mcp.connections().await;
    assert_eq!(again["connections"][0]["connection_id"], id.as_str());
    assert_eq!(fake.counters.code_redemptions.load(Ordering::SeqCst), 2);

    // Disconnect asks first; asking changes nothing.
    let page = browser.get(&format!("{}/connections", server.base)).await;
    let ask = browser
        .get(&format!(
            "{}{}",
            server.base,
            link_to(&page.body, "Disconnect Xero (Demo Company (UK))")
        ))
        .await;
    assert_eq!(ask.status, StatusCode::OK, "{}", ask.body);
    assert!(
        ask.body.contains("Disconnect Xero (Demo Company (UK))?"),
        "{}",
        ask.body
    );
    let form = ask.form();
    assert_eq!(count(&mcp).await, 1);

    // Forged: no token, a token of nothing, another origin, someone else's id.
    let origin = [("origin", server.base.as_str())];
    let forged = [
        (
            form.clone().with("csrf", ""),
            vec![("origin", server.base.as_str())],
        ),
        (form.clone().with("csrf", "v1.forged"), origin.to_vec()),
        (form.clone(), vec![("origin", "http://evil.example")]),
        (form.clone(), vec![("sec-fetch-site", "cross-site")]),
    ];
    for (attempt, headers) in forged {
        let refused = browser.submit_with(&attempt, &headers).await;
        assert_eq!(
            refused.status,
            StatusCode::FORBIDDEN,
            "{headers:?}: {}",
            refused.body
        );
    }
    // Nor can it disconnect: the rebound page's own name, as its origin.
    let rebound_origin = format!("http://{rebound}");
    let refused = browser
        .submit_with(
            &form,
            &[
                ("host", rebound.as_str()),
                ("origin", rebound_origin.as_str()),
            ],
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::MISDIRECTED_REQUEST,
        "{}",
        refused.body
    );
    let mut elsewhere = form.clone();
    elsewhere.action = elsewhere.action.replace(&id, "conn_not_yours");
    let refused = browser.submit_with(&elsewhere, &origin).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND, "{}", refused.body);
    assert_eq!(count(&mcp).await, 1);
    assert_eq!(fake.counters.revocations.load(Ordering::SeqCst), 0);
    assert!(server.log_shows("connections.bad_csrf").await);
    assert!(server.log_shows("connections.cross_site_post").await);

    // Confirmed: removed here, revoked at Xero (once), and the page says so.
    let done = browser.submit_with(&form, &origin).await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert!(
        done.body
            .contains("Disconnected Xero. Xero confirmed that grantry&#x27;s access is revoked.")
            || done.body.contains(
                "Disconnected Xero. Xero confirmed that grantry&#39;s access is revoked."
            ),
        "{}",
        done.body
    );
    assert!(
        done.body.contains("You have no connections"),
        "{}",
        done.body
    );
    assert_eq!(fake.counters.revocations.load(Ordering::SeqCst), 1);
    assert_eq!(count(&mcp).await, 0);
    // The same form again: nothing left to remove, nothing revoked twice.
    let twice = browser.submit_with(&form, &origin).await;
    assert_eq!(twice.status, StatusCode::NOT_FOUND, "{}", twice.body);
    assert_eq!(fake.counters.revocations.load(Ordering::SeqCst), 1);
}

on_every_store!(the_page_lists_reconnects_and_disconnects);

#[tokio::test]
async fn the_connected_page_links_to_the_connections_page() {
    let server = Server::start(&[]).await;
    let page = Browser::new()
        .get(&format!("{}/connected?provider=demo", server.base))
        .await;
    assert_eq!(
        link_to(&page.body, "See and manage your connections"),
        "/connections"
    );
}
