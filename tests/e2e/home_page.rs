//! `/`: a small page saying what this server is (the deployment's MCP connector), the MCP URL
//! to give an assistant, the accounts it connects, and a link to the person's connections. A
//! browser page like the others: the reader's language, the brand, the same headers and no
//! JavaScript, the per-address limit; a foreign `Host` is refused (`hardening/rebinding.rs`).

use reqwest::StatusCode;

use crate::connections::link_to;
use crate::support::{Browser, Server, with_room_in_the_window};

#[tokio::test]
async fn the_root_says_what_this_server_is_and_links_the_connections() {
    let server = Server::start(&[]).await;
    let page = Browser::new().get(&format!("{}/", server.base)).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body.contains("<title>MCP connector · grantry</title>"),
        "{}",
        page.body
    );
    assert!(page.body.contains("<h1>grantry</h1>"), "{}", page.body);
    assert!(page.body.contains("is an MCP connector"), "{}", page.body);
    assert!(
        page.body.contains(&format!(
            "<code class=\"endpoint\">{}</code>",
            server.mcp_url()
        )),
        "the URL a client is configured with: {}",
        page.body
    );
    assert!(page.body.contains("Demo Billing"), "what it connects");
    assert_eq!(
        link_to(&page.body, "See and manage your connections"),
        "/connections"
    );
    assert!(!page.body.contains("<script"), "no JavaScript");
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));
    assert_eq!(page.header("cache-control"), Some("no-store"));
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
}

#[tokio::test]
async fn the_root_speaks_the_readers_language_under_the_brand() {
    let server = Server::start(&["--brand-name", "Acme Books"]).await;
    let browser = Browser::new();
    let url = format!("{}/", server.base);
    for (lang, words) in [
        ("de", "Acme Books ist ein MCP-Connector"),
        ("fr", "Acme Books est un connecteur MCP"),
    ] {
        let page = browser.get_with(&url, &[("accept-language", lang)]).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(
            page.body.contains(&format!("<html lang=\"{lang}\">")),
            "{}",
            page.body
        );
        assert!(page.body.contains("<h1>Acme Books</h1>"), "{}", page.body);
        assert!(page.body.contains(words), "{lang}: {}", page.body);
    }
}

#[tokio::test]
async fn the_root_counts_against_the_browser_limit() {
    let server = Server::start(&["--rate-browser-ip", "2"]).await;
    let browser = Browser::new();
    let url = format!("{}/", server.base);
    with_room_in_the_window(10).await;
    for _ in 0..2 {
        assert_eq!(browser.get(&url).await.status, StatusCode::OK);
    }
    let page = browser.get(&url).await;
    assert_eq!(page.status, StatusCode::TOO_MANY_REQUESTS, "{}", page.body);
    assert!(page.header("retry-after").is_some());
}
