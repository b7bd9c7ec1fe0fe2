//! Provider settings that would weaken every sign-in: plain http off loopback is refused at
//! start, `pkce = "off"` is logged, and metadata advertising S256 gets PKCE anyway.

use serde_json::json;

use crate::support::mcp::url_and_form;
use crate::support::server::refusal;
use crate::support::{Browser, Mcp, Server};

fn catalog(text: &str) -> tempfile::NamedTempFile {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), text).unwrap();
    file
}

const PLAIN_HTTP_TOKEN_URL: &str = "default = \"acme\"\n[providers.acme]\n\
    authorize_url = \"https://login.acme.example/authorize\"\n\
    token_url = \"http://login.acme.example/token\"\n\
    api_base = \"https://api.acme.example\"\n\
    client_id = \"grantry\"\nclient_secret_env = \"FAKE_SECRET\"\nadapter = \"demo\"\n";

#[tokio::test]
async fn a_plain_http_provider_url_is_refused_at_start_unless_allowed_by_name() {
    let file = catalog(PLAIN_HTTP_TOKEN_URL);
    let path = file.path().to_str().unwrap();
    let out = refusal(&["--providers", path]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("providers.acme.token_url"), "{err}");
    assert!(err.contains("cleartext"), "{err}");

    let allowed = Server::start(&["--providers", path, "--allow-insecure-provider", "acme"]).await;
    let answer = Mcp::new(allowed.mcp_url())
        .request("tools/list", json!({}), json!({}))
        .await;
    assert_eq!(answer.status, 200);
}

/// Serves an RFC 8414 metadata document listing S256 (as the demo's own does) on a port of
/// its own: grantry reads provider metadata at start, before its own routes answer.
async fn metadata_server() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/metadata", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/metadata",
        axum::routing::get(|| async {
            axum::Json(json!({"code_challenge_methods_supported": ["S256"]}))
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test]
async fn pkce_off_is_logged_and_metadata_advertising_s256_gets_pkce_anyway() {
    // Two entries for grantry's own demo provider (which refuses a code request without
    // PKCE), both `pkce = "off"`: one with metadata that lists S256.
    let metadata = metadata_server().await;
    let entry = |base: &str, id: &str, metadata: &str| {
        format!(
            "[providers.{id}]\nauthorize_url = \"{base}/demo/authorize\"\n\
             token_url = \"{base}/demo/token\"\napi_base = \"{base}/demo/api\"\n\
             issuer = \"{base}/demo\"\nclient_id = \"grantry-demo\"\n\
             client_secret_env = \"DEMO_SECRET\"\nscopes = [\"invoices:read\"]\n\
             pkce = \"off\"\nadapter = \"demo\"\n{metadata}"
        )
    };
    let file = tempfile::NamedTempFile::new().unwrap();
    let path = file.path().to_str().unwrap().to_owned();
    // The catalog names grantry's own port: written anew for each port a start tries.
    let server = Server::start_naming_itself(|base| {
        let text = format!(
            "default = \"metadata\"\n{}{}",
            entry(
                base,
                "metadata",
                &format!("metadata_url = \"{metadata}\"\n")
            ),
            // No metadata where RFC 8414 or OpenID Connect would put it for this issuer.
            entry(
                base,
                "plain",
                "metadata_url = \"http://127.0.0.1:9/none\"\n"
            ),
        );
        std::fs::write(&path, text).unwrap();
        vec!["--providers".to_owned(), path.clone()]
    })
    .await;
    let log = server.settled_log().await;
    assert!(
        log.contains("provider=metadata") && log.contains("advertises S256: PKCE is used"),
        "{log}"
    );
    assert!(
        log.contains("provider=plain") && log.contains("a weaker setting"),
        "{log}"
    );

    let mcp = Mcp::new(server.mcp_url());
    let (link, _, _) = mcp
        .call_tool(
            "list_invoices",
            json!({"provider": "metadata"}),
            url_and_form(),
        )
        .await
        .sign_in_round();
    let signed_in = Browser::new().sign_in(&link, true).await;
    assert!(
        signed_in
            .authorize_url
            .contains("code_challenge_method=S256"),
        "{}",
        signed_in.authorize_url
    );
    signed_in.assert_connected();
}
