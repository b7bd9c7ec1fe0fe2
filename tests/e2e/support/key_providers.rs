//! Local fakes of the billing APIs connected with an API key, for what cannot be reached
//! from CI. Each checks what the real one checks (its API reference) and answers in its shape:
//!
//! - Paddle: the key as `Authorization: Bearer …` (any other key, or none, gets 403
//!   `invalid_token` in Paddle's error shape), the pinned `Paddle-Version: 1`; `GET
//!   /transactions` with `status` as a comma-separated filter, `per_page`, the `after` cursor
//!   and `meta.pagination.next`, totals as strings of minor units.
//! - Chargebee: each site under `/chargebee/{site}/api/v2` (an unknown site gets 404
//!   `site_not_found`), the key as the HTTP Basic user name with an empty password (any other
//!   gets 401 `api_authentication_failed`); `GET /invoices` with `status[is]` or `status[in]`
//!   (a JSON list), `limit`, and the opaque `offset` / `next_offset`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

/// The one key the fake accepts (a sandbox key's shape).
pub const PADDLE_KEY: &str = "pdl_sdbx_apikey_01jfaketestkey_s3cr3tPart0fTheKey42";
/// Chargebee's sites, each with the one key it accepts.
pub const CHARGEBEE_SITES: [(&str, &str); 2] = [
    ("acme-test", "test_cbFakeKeyOfAcme0123456789abcdef"),
    ("globex-test", "test_cbFakeKeyOfGlobex9876543210fedc"),
];

/// Chargebee's invoices on every site: (id, status, total in cents).
const CHARGEBEE_INVOICES: [(&str, &str, i64); 5] = [
    ("101", "paid", 2999),
    ("102", "posted", 4999),
    ("103", "payment_due", 1500),
    ("104", "voided", 700),
    ("105", "not_paid", 12000),
];

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
    /// Every key deleted at the provider: each is refused from now on.
    pub keys_deleted: Arc<AtomicBool>,
}

impl KeyFake {
    pub async fn start() -> KeyFake {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let fake = KeyFake {
            base: format!("http://{}", listener.local_addr().unwrap()),
            refused: Arc::default(),
            served: Arc::default(),
            keys_deleted: Arc::default(),
        };
        let app = Router::new()
            .route("/paddle/transactions", get(transactions))
            .route("/chargebee/{site}/api/v2/invoices", get(chargebee_invoices))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        fake
    }

    /// A `--providers` file offering Paddle and Chargebee at this fake, the demo provider first.
    pub fn catalog(&self) -> String {
        let base = &self.base;
        format!(
            "default = \"demo\"\n[providers.paddle]\napi_base = \"{base}/paddle\"\n\
             [providers.chargebee]\napi_base = \"{base}/chargebee/{{site}}/api/v2\"\n"
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
    let deleted = fake.keys_deleted.load(Ordering::SeqCst);
    if deleted || header("authorization") != Some(&format!("Bearer {PADDLE_KEY}")) {
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

fn chargebee_error(status: StatusCode, code: &str, message: &str) -> Response {
    let body = json!({"message": message, "type": "invalid_request", "api_error_code": code,
        "error_code": code, "http_status_code": status.as_u16()});
    (status, axum::Json(body)).into_response()
}

/// The key of an HTTP Basic header whose password is empty.
fn basic_key(headers: &HeaderMap) -> Option<String> {
    use base64::Engine as _;
    let encoded = headers
        .get("authorization")?
        .to_str()
        .ok()?
        .strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let (user, password) = String::from_utf8(decoded)
        .ok()?
        .split_once(':')
        .map(|(u, p)| (u.to_owned(), p.to_owned()))?;
    password.is_empty().then_some(user)
}

async fn chargebee_invoices(
    State(fake): State<KeyFake>,
    axum::extract::Path(site): axum::extract::Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let Some((_, key)) = CHARGEBEE_SITES.iter().find(|(name, _)| *name == site) else {
        return chargebee_error(
            StatusCode::NOT_FOUND,
            "site_not_found",
            "Sorry, we couldn't find that site",
        );
    };
    if fake.keys_deleted.load(Ordering::SeqCst) || basic_key(&headers).as_deref() != Some(key) {
        fake.refused.fetch_add(1, Ordering::SeqCst);
        return chargebee_error(
            StatusCode::UNAUTHORIZED,
            "api_authentication_failed",
            "Sorry, authentication failed. Invalid api key",
        );
    }
    fake.served.fetch_add(1, Ordering::SeqCst);
    let wanted: Option<Vec<String>> = match (query.get("status[is]"), query.get("status[in]")) {
        (Some(one), _) => Some(vec![one.clone()]),
        (None, Some(list)) => match serde_json::from_str(list) {
            Ok(list) => Some(list),
            Err(_) => {
                return chargebee_error(StatusCode::BAD_REQUEST, "invalid_request", "status[in]");
            }
        },
        (None, None) => None,
    };
    let limit: usize = query
        .get("limit")
        .and_then(|n| n.parse().ok())
        .filter(|n| (1..=100).contains(n))
        .unwrap_or(10);
    let from: usize = match query.get("offset") {
        None => 0,
        Some(offset) => match serde_json::from_str::<Vec<String>>(offset)
            .ok()
            .and_then(|o| o.first()?.parse().ok())
        {
            Some(from) => from,
            None => return chargebee_error(StatusCode::BAD_REQUEST, "invalid_request", "offset"),
        },
    };
    let rows: Vec<_> = CHARGEBEE_INVOICES
        .iter()
        .filter(|(_, status, _)| {
            wanted
                .as_ref()
                .is_none_or(|w| w.iter().any(|s| s == status))
        })
        .collect();
    let page: Vec<Value> = rows.iter().skip(from).take(limit).map(|(id, status, total)| json!({
        "invoice": {"id": id, "customer_id": "cust_fake", "status": status, "date": 1_793_606_400,
            "due_date": 1_794_816_000, "total": total, "currency_code": "USD",
            "billing_address": {"company": format!("Customer of {site}")}, "object": "invoice"}
    })).collect();
    let next = from + limit;
    let mut body = json!({"list": page});
    if next < rows.len() {
        body["next_offset"] = json!(serde_json::to_string(&[next.to_string()]).unwrap());
    }
    axum::Json(body).into_response()
}
