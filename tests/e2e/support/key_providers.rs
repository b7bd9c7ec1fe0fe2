//! A local fake of Paddle Billing's API, a provider connected with an API key, for what
//! cannot be reached from CI. It checks what Paddle checks (developer.paddle.com, API
//! reference): the key as `Authorization: Bearer …` (any other key, or none, gets 403
//! `invalid_token` in Paddle's error shape), the pinned `Paddle-Version: 1`, and it serves
//! `GET /transactions` in Paddle's shape: `status` as a comma-separated filter, `per_page`,
//! the `after` cursor and `meta.pagination.next`, totals as strings of minor units.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// The one key the fake accepts (a sandbox key's shape).
pub const PADDLE_KEY: &str = "pdl_sdbx_apikey_01jfaketestkey_s3cr3tPart0fTheKey42";

/// The fake's transactions: (id, status, grand total in cents).
const TRANSACTIONS: [(&str, &str, &str); 7] = [
    ("txn_01a", "draft", "1000"),
    ("txn_01b", "ready", "2000"),
    ("txn_01c", "billed", "11900"),
    ("txn_01d", "paid", "5000"),
    ("txn_01e", "completed", "7500"),
    ("txn_01f", "canceled", "300"),
    ("txn_01g", "past_due", "4200"),
];

#[derive(Clone)]
pub struct KeyFake {
    pub base: String,
    /// Requests answered 403 for their key.
    pub refused: Arc<AtomicU64>,
    /// Requests served.
    pub served: Arc<AtomicU64>,
}

impl KeyFake {
    pub async fn start() -> KeyFake {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let fake = KeyFake {
            base: format!("http://{}", listener.local_addr().unwrap()),
            refused: Arc::default(),
            served: Arc::default(),
        };
        let app = Router::new()
            .route("/paddle/transactions", get(transactions))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        fake
    }

    /// A `--providers` file offering Paddle at this fake, with the demo provider first.
    pub fn catalog(&self) -> String {
        format!(
            "default = \"demo\"\n[providers.paddle]\napi_base = \"{}/paddle\"\n",
            self.base
        )
    }
}

fn paddle_error(code: &str, detail: &str) -> Response {
    let body = json!({
        "error": {"type": "request_error", "code": code, "detail": detail,
                  "documentation_url": format!("https://developer.paddle.com/errors/shared/{code}")},
        "meta": {"request_id": "00000000-0000-0000-0000-000000000000"}
    });
    (StatusCode::FORBIDDEN, axum::Json(body)).into_response()
}

async fn transactions(
    State(fake): State<KeyFake>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if header("authorization") != Some(&format!("Bearer {PADDLE_KEY}")) {
        fake.refused.fetch_add(1, Ordering::SeqCst);
        return paddle_error("invalid_token", "Invalid or revoked API key.");
    }
    if header("paddle-version").is_some_and(|v| v != "1") {
        return (StatusCode::BAD_REQUEST, "invalid Paddle-Version").into_response();
    }
    fake.served.fetch_add(1, Ordering::SeqCst);
    let per_page: usize = query
        .get("per_page")
        .and_then(|n| n.parse().ok())
        .filter(|n| (1..=200).contains(n))
        .unwrap_or(50);
    let wanted: Option<Vec<&str>> = query.get("status").map(|s| s.split(',').collect());
    let rows: Vec<_> = TRANSACTIONS
        .iter()
        .filter(|(_, status, _)| wanted.as_ref().is_none_or(|w| w.contains(status)))
        .skip_while(|(id, _, _)| {
            query
                .get("after")
                .is_some_and(|after| *id <= after.as_str())
        })
        .collect();
    let page: Vec<Value> = rows
        .iter()
        .take(per_page)
        .map(|row| transaction(row))
        .collect();
    let has_more = rows.len() > per_page;
    let next = page.last().map(|last| {
        format!(
            "{}/paddle/transactions?after={}&per_page={per_page}",
            fake.base,
            last["id"].as_str().unwrap()
        )
    });
    axum::Json(json!({
        "data": page,
        "meta": {"request_id": "r", "pagination": {
            "per_page": per_page, "next": next, "has_more": has_more,
            "estimated_total": rows.len()}}
    }))
    .into_response()
}

fn transaction((id, status, total): &(&str, &str, &str)) -> Value {
    json!({
        "id": id, "status": status, "customer_id": "ctm_01fake",
        "invoice_number": if *status == "draft" { Value::Null } else { json!(format!("INV-{id}")) },
        "currency_code": "EUR", "origin": "api", "collection_mode": "manual",
        "details": {"totals": {"subtotal": total, "tax": "0", "total": total, "grand_total": total}},
        "billed_at": if *status == "draft" { Value::Null } else { json!("2026-11-02T10:00:00.000000Z") },
        "created_at": "2026-11-01T09:00:00.000000Z",
    })
}
