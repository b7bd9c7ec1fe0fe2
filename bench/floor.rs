//! The floor of the benchmark's rounds that do work: a bare axum server doing only what the
//! design requires of each round, through grantry's own store and sealer, with none of MCP
//! (no parsing, no identity, no limits, no routing by method). Where a grantry round falls
//! short of a target, this shows how much of the gap the required work alone takes.
//!
//! - `POST /input_required`: the grant read that finds nothing, a sealed ticket and a sealed
//!   state holding it (the sizes grantry seals), the answer's JSON;
//! - `POST /grant_inproc`: the grant read that finds one, its tokens opened, the answer's JSON
//!   from a fixed invoice list;
//! - `POST /grant_http`: the same with the invoice list fetched over loopback HTTP from this
//!   process's `GET /upstream`, as grantry fetches the demo API's.
//!
//! `GRANTRY_KEYS=… floor STORE_URL STORE_PREFIX 127.0.0.1:9002`

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use grantry::config::{Config, ServeArgs};
use grantry::grants::{GrantKey, Grants};
use grantry::identity::{DEV_ISSUER, Principal};
use grantry::providers::oauth::TokenSet;
use grantry::seal::{KeyRing, Purpose, Sealer};
use serde_json::{Value, json};

/// Plaintext sizes of what an `input_required` round seals: the ticket, and the state that
/// holds the sealed ticket (grantry's are 200 and 900 characters once sealed).
const TICKET_PLAIN_LEN: usize = 100;
const STATE_PLAIN_LEN: usize = 420;

/// What the upstream answers: four invoices, the shape of the demo API's list.
const INVOICES: &str = r#"{"invoices":[{"id":"inv_1001","number":"INV-1001","amount_cents":12900,"currency":"EUR","state":"open","due":"2026-12-01"},{"id":"inv_1002","number":"INV-1002","amount_cents":4500,"currency":"EUR","state":"paid","due":"2026-11-01"},{"id":"inv_1003","number":"INV-1003","amount_cents":99000,"currency":"EUR","state":"open","due":"2026-12-15"},{"id":"inv_1004","number":"INV-1004","amount_cents":2300,"currency":"EUR","state":"paid","due":"2026-10-20"}]}"#;

// The allocator grantry runs with, so that the ratios compare the work, not the allocators.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Floor {
    grants: Grants,
    sealer: Sealer,
    client: reqwest::Client,
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
    let config = Config::resolve(ServeArgs {
        store: Some(store),
        store_prefix: Some(prefix),
        data_dir: Some(data_dir.path().to_owned()),
        keys: Some(keys.clone()),
        ..Default::default()
    })
    .expect("a valid store configuration");
    let grants = grantry::state::maintenance_grants(&config)
        .await
        .expect("the store opens");
    let ring = KeyRing::from_encoded(&keys.split(',').collect::<Vec<_>>()).expect("keys");
    let user = |subject: &str| GrantKey {
        principal: Principal {
            issuer: DEV_ISSUER.to_owned(),
            subject: subject.to_owned(),
        },
        provider: "demo".to_owned(),
    };
    let floor = Arc::new(Floor {
        grants,
        sealer: Sealer::new(ring, config.mcp_url()),
        client: grantry::providers::http::client(),
        upstream: format!("http://{listen}/upstream"),
        connected: user("floor-connected"),
        unconnected: user("floor-unconnected"),
    });
    connect(&floor).await;
    let app = Router::new()
        .route("/input_required", post(input_required))
        .route("/grant_inproc", post(grant_inproc))
        .route("/grant_http", post(grant_http))
        .route(
            "/upstream",
            get(|| async { json_answer(INVOICES.to_owned()) }),
        )
        .with_state(floor);
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .unwrap_or_else(|e| panic!("cannot listen on {listen}: {e}"));
    axum::serve(listener, app).await.expect("serve");
}

/// Stores the grant the grant rounds read, with tokens of realistic length.
async fn connect(floor: &Floor) {
    let now = grantry::clock::unix_now();
    let tokens = TokenSet {
        access_token: "a".repeat(180),
        refresh_token: Some("r".repeat(120)),
        expires_at: now + 86_400,
        scopes: vec!["invoices:read".to_owned()],
        account: None,
        previous_refresh_token: None,
        rotated_at: None,
    };
    floor
        .grants
        .store_new(&floor.connected, &tokens, now)
        .await
        .expect("the floor's grant is stored");
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
    read_grant(&floor).await;
    complete(INVOICES.as_bytes())
}

async fn grant_http(State(floor): State<Arc<Floor>>, _body: Bytes) -> impl IntoResponse {
    let grant = read_grant(&floor).await;
    let response = floor
        .client
        .get(&floor.upstream)
        .bearer_auth(&grant.access_token)
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
