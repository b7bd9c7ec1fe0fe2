//! The floor of the benchmark's rounds that do work: a bare axum server doing only what the
//! design requires of each round, through grantry's own store and sealer, with none of MCP
//! (no parsing, no identity, no limits, no routing by method). Where a grantry round falls
//! short of a target, this shows how much of the gap the required work alone takes.
//!
//! - `POST /input_required`: the grant read that finds nothing, a sealed ticket and a sealed
//!   state holding it (the sizes grantry seals), the answer's JSON;
//! - `POST /grant_inproc`: the grant read that finds one, its tokens opened, the invoices asked
//!   of grantry's own demo billing API through its router in this process (it opens its sealed
//!   access token and writes the invoices, as it does for grantry), the answer's JSON;
//! - `POST /grant_http`: the same with the demo API, served by this process at `/demo`, called
//!   over loopback HTTP, as grantry calls it.
//!
//! The grant holds real demo tokens, obtained at start through the demo's own authorization
//! code flow (auto-approved, PKCE), so what is stored and opened has grantry's sizes.
//!
//! `GRANTRY_KEYS=… floor STORE_URL STORE_PREFIX 127.0.0.1:9002`

// Benchmark scaffolding, not product: an unwrap that fails is the run's failure, and nothing
// here is anyone's API.
#![allow(clippy::unwrap_used, unreachable_pub)]

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes, to_bytes};
use axum::extract::State;
use axum::http::Request;
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, LOCATION};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use grantry::config::{Config, ServeArgs};
use grantry::connections::{Lifecycle, LifecycleSettings};
use grantry::demo::{DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, DEMO_SCOPE, DemoConfig, DemoProvider};
use grantry::grants::{GrantKey, Grants};
use grantry::identity::{DEV_ISSUER, Principal};
use grantry::providers::oauth::{ProviderToken, TokenSet};
use grantry::seal::{KeyRing, Purpose, Sealer};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tower::ServiceExt as _;

/// Plaintext sizes of what an `input_required` round seals: the ticket, and the state that
/// holds the sealed ticket (grantry's are 200 and 900 characters once sealed).
const TICKET_PLAIN_LEN: usize = 100;
const STATE_PLAIN_LEN: usize = 420;

/// Where the demo sends its codes; never followed (the code is read from the redirect).
const REDIRECT: &str = "http://127.0.0.1/floor/callback";
const VERIFIER: &str = "floor-pkce-verifier-floor-pkce-verifier-floor-pkce-verifier";

// The allocator grantry runs with, so that the ratios compare the work, not the allocators.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Floor {
    grants: Grants,
    sealer: Arc<Sealer>,
    client: reqwest::Client,
    /// The demo API's router, called in-process by `grant_inproc`.
    demo_api: Router,
    /// The demo API's invoice list over loopback HTTP, for `grant_http`.
    upstream: String,
    connected: GrantKey,
    unconnected: GrantKey,
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let store = args.next().expect("STORE_URL");
    let prefix = args.next().expect("STORE_PREFIX");
    let listen = args.next().expect("LISTEN");
    let keys = std::env::var("GRANTRY_KEYS").expect("GRANTRY_KEYS");
    let data_dir = tempfile::tempdir().expect("a scratch data directory");
    let flags = ServeArgs::from_flags([
        "--store",
        &store,
        "--store-prefix",
        &prefix,
        "--data-dir",
        data_dir.path().to_str().expect("a UTF-8 path"),
        "--keys",
        &keys,
    ])
    .expect("valid store flags");
    let config = Config::resolve(flags).expect("a valid store configuration");
    let grants = grantry::startup::maintenance_grants(&config)
        .await
        .expect("the store opens");
    let ring = KeyRing::from_encoded(&keys.split(',').collect::<Vec<_>>()).expect("keys");
    let user = |subject: &str| GrantKey {
        principal: Principal {
            issuer: DEV_ISSUER.to_owned(),
            subject: subject.to_owned(),
        },
        provider: "demo".parse().expect("a provider id"),
        account: None,
    };
    let sealer = Arc::new(Sealer::new(ring, config.mcp_url()));
    let demo = DemoProvider::new(
        DemoConfig {
            auto_approve: true,
            access_token_ttl_secs: 86_400,
            ..DemoConfig::new(format!("http://{listen}/demo"), vec![REDIRECT.to_owned()])
        },
        sealer.clone(),
    );
    let floor = Arc::new(Floor {
        grants,
        sealer,
        client: grantry::providers::http::client(),
        demo_api: demo.router(),
        upstream: format!("http://{listen}/demo/api/invoices?status=open"),
        connected: user("floor-connected"),
        unconnected: user("floor-unconnected"),
    });
    connect(&floor).await;
    let app = Router::new()
        .route("/input_required", post(input_required))
        .route("/grant_inproc", post(grant_inproc))
        .route("/grant_http", post(grant_http))
        .route("/healthz", get(|| async { "ok" }))
        .with_state(floor)
        .nest("/demo", demo.router());
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .unwrap_or_else(|e| panic!("cannot listen on {listen}: {e}"));
    axum::serve(listener, app).await.expect("serve");
}

/// Stores the grant the grant rounds read: real demo tokens, from the demo's code flow.
async fn connect(floor: &Floor) {
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(VERIFIER.as_bytes()));
    let authorize = format!(
        "/authorize?response_type=code&client_id={DEMO_CLIENT_ID}&redirect_uri={}&scope={}\
         &state=floor&code_challenge={challenge}&code_challenge_method=S256",
        encoded(REDIRECT),
        encoded(DEMO_SCOPE),
    );
    let approved = demo_call(floor, Request::get(authorize).body(Body::empty())).await;
    let location = approved
        .headers()
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .expect("the demo approves at once and redirects with a code");
    let code = url::Url::parse(location)
        .expect("a redirect URL")
        .query_pairs()
        .find(|(name, _)| name == "code")
        .expect("a code in the redirect")
        .1
        .into_owned();
    let form = format!(
        "grant_type=authorization_code&code={}&redirect_uri={}&code_verifier={VERIFIER}",
        encoded(&code),
        encoded(REDIRECT),
    );
    let basic = STANDARD.encode(format!("{DEMO_CLIENT_ID}:{DEMO_CLIENT_SECRET}"));
    let token = Request::post("/token")
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(AUTHORIZATION, format!("Basic {basic}"))
        .body(Body::from(form));
    let answer = demo_call(floor, token).await;
    assert!(answer.status().is_success(), "the demo redeems the code");
    let body = to_bytes(answer.into_body(), 64 * 1024)
        .await
        .expect("token body");
    let tokens: Value = serde_json::from_slice(&body).expect("token JSON");
    let text = |name: &str| tokens[name].as_str().map(ProviderToken::from);
    let now = grantry_base::clock::unix_now();
    let tokens = TokenSet {
        access_token: text("access_token").expect("an access token"),
        refresh_token: text("refresh_token"),
        expires_at: now + tokens["expires_in"].as_i64().expect("expires_in"),
        scopes: vec![DEMO_SCOPE.to_owned()],
        account: None,
        previous_refresh_token: None,
        rotated_at: None,
    };
    let demo =
        grantry::providers::Catalog::demo_entry("http://127.0.0.1/demo").expect("the demo entry");
    let writes = Lifecycle::new(floor.grants.clone(), LifecycleSettings::default());
    writes
        .store_signed_in(&floor.connected, &demo, &tokens, now)
        .await
        .expect("the floor's grant is stored");
}

/// One request to the demo's router in this process, as grantry's in-process adapter sends it
/// (it takes the builder's result so that each caller need not unwrap it).
async fn demo_call(
    floor: &Floor,
    request: Result<Request<Body>, axum::http::Error>,
) -> axum::response::Response {
    let request = request.expect("a well-formed request");
    floor
        .demo_api
        .clone()
        .oneshot(request)
        .await
        .expect("the router is infallible")
}

fn encoded(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

async fn input_required(State(floor): State<Arc<Floor>>, _body: Bytes) -> impl IntoResponse {
    let found = floor
        .grants
        .get(&floor.unconnected)
        .await
        .expect("store read");
    assert!(found.is_none());
    let ticket = floor
        .sealer
        .seal_bytes(Purpose::SignInTicket, b"", &[b't'; TICKET_PLAIN_LEN]);
    let mut state = ticket.clone().into_bytes();
    state.resize(ticket.len() + STATE_PLAIN_LEN, b's');
    let request_state = floor.sealer.seal_bytes(Purpose::RequestState, b"", &state);
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {
        "resultType": "input_required",
        "inputRequests": {"connect_demo": {"method": "elicitation/create", "params": {
            "mode": "url",
            "message": "Connect your Demo Billing account so grantry can act on it.",
            "url": format!("http://127.0.0.1/connect?t={ticket}"),
            "elicitationId": "floor",
        }}},
        "requestState": request_state,
    }});
    json_answer(answer.to_string())
}

async fn grant_inproc(State(floor): State<Arc<Floor>>, _body: Bytes) -> impl IntoResponse {
    let grant = read_grant(&floor).await;
    let request = Request::get("/api/invoices?status=open")
        .header(
            AUTHORIZATION,
            format!("Bearer {}", grant.access_token.expose()),
        )
        .body(Body::empty());
    let answer = demo_call(&floor, request).await;
    let body = to_bytes(answer.into_body(), 1024 * 1024)
        .await
        .expect("the demo's invoices");
    complete(&body)
}

async fn grant_http(State(floor): State<Arc<Floor>>, _body: Bytes) -> impl IntoResponse {
    let grant = read_grant(&floor).await;
    let response = floor
        .client
        .get(&floor.upstream)
        .bearer_auth(grant.access_token.expose())
        .send()
        .await
        .expect("upstream answers");
    let body = response.bytes().await.expect("upstream body");
    complete(&body)
}

async fn read_grant(floor: &Floor) -> TokenSet {
    let grant = floor
        .grants
        .get(&floor.connected)
        .await
        .expect("store read");
    grant.expect("the floor's grant is present").tokens
}

/// A completed call's answer carrying the invoice list, parsed and written again as grantry
/// normalises the provider's answer.
fn complete(invoices: &[u8]) -> axum::response::Response {
    let list: Value = serde_json::from_slice(invoices).expect("invoice JSON");
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {
        "resultType": "complete",
        "content": [{"type": "text", "text": list.to_string()}],
        "structuredContent": list,
        "isError": false,
    }});
    json_answer(answer.to_string()).into_response()
}

fn json_answer(body: String) -> impl IntoResponse {
    ([(CONTENT_TYPE, "application/json")], body)
}
