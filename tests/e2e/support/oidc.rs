//! A real OpenID Connect provider for the tests: panva's oidc-provider (tests/oidc), started
//! once per test binary as two issuers sharing one signing key. Tokens come from it the way a
//! real client gets them: authorization code + PKCE, then the token endpoint.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::StatusCode;
use sha2::Digest as _;

use super::browser::{Browser, Page};

/// The login client grantry is registered as at the provider.
pub const CLIENT_ID: &str = "grantry";
pub const CLIENT_SECRET: &str = "grantry-secret";

pub struct Provider {
    pub issuer: String,
    /// Another issuer signing with the same key: its tokens differ only in `iss`.
    pub other_issuer: String,
}

/// The provider process, holding its stdin pipe open for the life of the test process: the
/// provider exits when the tests do (it is started with --exit-with-stdin).
static CHILD: Mutex<Option<Child>> = Mutex::new(None);
static PROVIDER: OnceLock<Provider> = OnceLock::new();

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The shared provider, started on first use.
pub fn provider() -> &'static Provider {
    PROVIDER.get_or_init(|| {
        let install = Command::new(repo().join("tests/oidc/install"))
            .stderr(Stdio::inherit())
            .output()
            .expect("tests/oidc/install runs");
        assert!(install.status.success(), "tests/oidc/install failed");
        let deps = PathBuf::from(String::from_utf8(install.stdout).unwrap().trim());
        let link = repo().join("tests/oidc/node_modules");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(deps.join("node_modules"), &link)
            .expect("node_modules link beside server.mjs");
        let mut child = Command::new(deps.join("node_modules/.bin/node"))
            .arg(repo().join("tests/oidc/server.mjs"))
            .arg("--exit-with-stdin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the OIDC provider starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: serde_json::Value =
            serde_json::from_str(&line).expect("the provider prints its issuers");
        *CHILD.lock().unwrap() = Some(child);
        super::leaks::record("client secret", [CLIENT_SECRET]);
        Provider {
            issuer: ready["issuer"].as_str().unwrap().to_owned(),
            other_issuer: ready["other_issuer"].as_str().unwrap().to_owned(),
        }
    })
}

/// The grantry arguments and environment for oidc identity at `issuer`, with the demo
/// provider (off by default under oidc) to sign in to.
pub fn grantry_args(issuer: &str) -> Vec<String> {
    [
        "--identity",
        "oidc",
        "--oidc-issuer",
        issuer,
        "--oidc-client-id",
        CLIENT_ID,
        "--demo",
        "true",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// A user name no other test uses, so that tests never share an account.
pub fn user(name: &str) -> String {
    format!("{name}-{:08x}", rand::random::<u32>())
}

fn rand_bytes() -> [u8; 16] {
    rand::random()
}

/// An access token for `user` and `resource` from `issuer`, got as a client would: the
/// authorization endpoint (the provider signs `user` in through `login_hint`), then the
/// token endpoint with the PKCE verifier. `client_id` picks the token kind (tests/oidc).
pub async fn access_token(issuer: &str, user: &str, resource: &str, client_id: &str) -> String {
    access_token_with_scope(issuer, user, resource, client_id, "openid invoices").await
}

pub async fn access_token_with_scope(
    issuer: &str,
    user: &str,
    resource: &str,
    client_id: &str,
    scope: &str,
) -> String {
    token_response(issuer, user, resource, client_id, scope).await["access_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The whole token endpoint answer (access token, ID token, …).
pub async fn token_response(
    issuer: &str,
    user: &str,
    resource: &str,
    client_id: &str,
    scope: &str,
) -> serde_json::Value {
    let http = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let verifier = URL_SAFE_NO_PAD.encode([rand_bytes(), rand_bytes()].concat());
    let challenge = URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier.as_bytes()));
    let redirect_uri = "http://127.0.0.1/callback";
    let mut url = url::Url::parse(&format!("{issuer}/auth")).unwrap();
    url.query_pairs_mut()
        .append_pair("client_id", client_id)
        .append_pair("response_type", "code")
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("scope", scope)
        .append_pair("resource", resource)
        .append_pair("login_hint", user)
        .append_pair("code_challenge", &challenge)
        .append_pair("code_challenge_method", "S256")
        .append_pair("state", "e2e");
    let mut next = url.to_string();
    let code = loop {
        let response = http.get(&next).send().await.unwrap();
        assert!(
            response.status().is_redirection(),
            "{next}: {}",
            response.status()
        );
        let location = response.headers()["location"].to_str().unwrap().to_owned();
        let target = url::Url::parse(&next).unwrap().join(&location).unwrap();
        if target.as_str().starts_with(redirect_uri) {
            let code = target
                .query_pairs()
                .find(|(k, _)| k == "code")
                .unwrap_or_else(|| panic!("no code in {target}"));
            break code.1.into_owned();
        }
        next = target.to_string();
    };
    let response = http
        .post(format!("{issuer}/token"))
        .form(&[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", redirect_uri),
            ("client_id", client_id),
            ("code_verifier", &verifier),
            ("resource", resource),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: serde_json::Value = response.json().await.unwrap();
    super::leaks::record("oidc code", [code.as_str()]);
    super::leaks::record(
        "oidc tokens",
        ["access_token", "id_token", "refresh_token"]
            .iter()
            .filter_map(|k| body[k].as_str()),
    );
    body
}

/// An access token `service-client` gets for itself (client credentials, RFC 6749 §4.4): no
/// person behind it; its `sub` is its client id.
pub async fn client_credentials_token(issuer: &str, resource: &str, scope: &str) -> String {
    let response = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .basic_auth("service-client", Some("service-secret"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("resource", resource),
            ("scope", scope),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: serde_json::Value = response.json().await.unwrap();
    let token = body["access_token"].as_str().unwrap().to_owned();
    super::leaks::record("oidc tokens", [token.as_str()]);
    token
}

impl Browser {
    /// Follows redirects from `url` and, when the provider asks who is there, signs in as
    /// `user`; returns the first page that is not a redirect.
    pub async fn open_signing_in_as(&self, url: &str, user: &str) -> Page {
        let mut page = self.get(url).await;
        for _ in 0..12 {
            if page.status.is_redirection() {
                let next = url::Url::parse(&page.url)
                    .unwrap()
                    .join(&page.location().unwrap())
                    .unwrap();
                page = self.get(next.as_str()).await;
            } else if page.status == StatusCode::OK && page.url.contains("/interaction/") {
                let form = page.form().with("login", user);
                page = self.submit(&form).await;
            } else {
                return page;
            }
        }
        panic!("too many redirects from {url}");
    }
}
