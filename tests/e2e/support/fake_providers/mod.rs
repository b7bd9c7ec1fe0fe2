//! Local fakes of the billing providers grantry has adapters for, on one loopback port, each
//! under `/{provider}`: an OAuth server (authorize approves at once; token endpoint with
//! refresh-token rotation that revokes the whole family when a used refresh token comes back,
//! as Xero and FreshBooks document; revocation) and the invoice API in the provider's own
//! response shape (from its API reference), with its pagination and status vocabulary.
//!
//! Real providers cannot be reached from CI, and their sandboxes need accounts; these fakes
//! serve the documented shapes so each adapter is exercised end to end through the URLs a
//! `--providers` file overrides.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// The providers, their fake data sizes, and which adapter each uses.
pub const PROVIDERS: [(&str, usize); 6] = [
    ("stripe", 150),
    ("xero", 130),
    ("quickbooks", 130),
    ("freshbooks", 130),
    ("zoho", 230),
    ("sage", 130),
];

/// What the fake has seen, for assertions.
#[derive(Default)]
pub struct Counters {
    pub code_redemptions: AtomicU64,
    pub refreshes: AtomicU64,
    pub family_revocations: AtomicU64,
    pub revocations: AtomicU64,
    pub busy_answers: AtomicU64,
}

#[derive(Default)]
struct Tokens {
    /// access token → (provider, family, expires at unix seconds).
    access: HashMap<String, (String, u64, i64)>,
    /// live refresh token → family.
    refresh: HashMap<String, u64>,
    /// refresh tokens already rotated away → family.
    used_refresh: HashMap<String, u64>,
    revoked_families: HashSet<u64>,
    codes: HashMap<String, String>,
    next: u64,
}

/// Invoices written through the fake's API (Xero's shape).
#[derive(Default)]
pub struct Written {
    /// Created invoices, by id.
    pub created: HashMap<String, Value>,
    pub by_idempotency_key: HashMap<String, String>,
}

#[derive(Clone)]
pub struct Fake {
    pub base: String,
    pub counters: Arc<Counters>,
    pub written: Arc<Mutex<Written>>,
    tokens: Arc<Mutex<Tokens>>,
    settings: Arc<Mutex<Settings>>,
}

/// Knobs a test turns.
#[derive(Clone)]
pub struct Settings {
    /// `expires_in` of tokens from a code.
    pub first_token_ttl: i64,
    /// `expires_in` of tokens from a refresh.
    pub refreshed_token_ttl: i64,
    /// How long the token endpoint takes to answer a refresh (widens races).
    pub refresh_delay: Duration,
    /// Answer every refresh with `invalid_grant`.
    pub refuse_refresh: bool,
    /// API answers to give before serving normally: 429 with each `Retry-After`, in order.
    pub busy: Vec<u64>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            first_token_ttl: 3600,
            refreshed_token_ttl: 3600,
            refresh_delay: Duration::ZERO,
            refuse_refresh: false,
            busy: Vec::new(),
        }
    }
}

fn now() -> i64 {
    std::time::UNIX_EPOCH.elapsed().unwrap().as_secs() as i64
}

impl Fake {
    pub async fn start() -> Fake {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let fake = Fake {
            base: format!("http://{}", listener.local_addr().unwrap()),
            counters: Arc::default(),
            written: Arc::default(),
            tokens: Arc::default(),
            settings: Arc::new(Mutex::new(Settings::default())),
        };
        let app = Router::new()
            .route("/{provider}/oauth/authorize", get(authorize))
            .route("/{provider}/oauth/token", post(token))
            .route("/{provider}/oauth/revoke", post(revoke))
            .route("/{provider}/api/{*path}", get(api).post(api_write))
            .with_state(fake.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        fake
    }

    pub fn set(&self, change: impl FnOnce(&mut Settings)) {
        change(&mut self.settings.lock().unwrap());
    }

    /// A `--providers` file connecting every fake provider, `default` first.
    pub fn catalog(&self, default: &str) -> String {
        let mut text = format!("default = \"{default}\"\n");
        for (id, _) in PROVIDERS {
            let base = &self.base;
            text.push_str(&format!(
                "[providers.{id}]\nclient_id = \"client-{id}\"\nclient_secret_env = \"FAKE_SECRET\"\n\
                 authorize_url = \"{base}/{id}/oauth/authorize\"\ntoken_url = \"{base}/{id}/oauth/token\"\n\
                 revoke_url = \"{base}/{id}/oauth/revoke\"\napi_base = \"{base}/{id}/api\"\n"
            ));
        }
        text
    }

    /// Revokes every access token issued so far (they still look unexpired to grantry).
    pub fn revoke_access_tokens(&self) {
        self.tokens.lock().unwrap().access.clear();
    }

    /// Live access tokens (for checks that a token never leaks).
    pub fn issued_tokens(&self) -> Vec<String> {
        let tokens = self.tokens.lock().unwrap();
        tokens
            .access
            .keys()
            .chain(tokens.refresh.keys())
            .chain(tokens.used_refresh.keys())
            .cloned()
            .collect()
    }
}

/// The redirect back with a code at once (the user approved), plus what each provider adds.
async fn authorize(
    State(fake): State<Fake>,
    Path(provider): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let mut tokens = fake.tokens.lock().unwrap();
    tokens.next += 1;
    let code = format!("code-{provider}-{}-{}", tokens.next, rand::random::<u64>());
    tokens.codes.insert(code.clone(), provider.clone());
    super::leaks::record("provider code", [code.as_str()]);
    let mut back = url::Url::parse(&query["redirect_uri"]).unwrap();
    back.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &query["state"]);
    if provider == "quickbooks" {
        back.query_pairs_mut().append_pair("realmId", "9130355");
    }
    if provider == "zoho" {
        let server = fake.base.clone();
        back.query_pairs_mut()
            .append_pair("location", "us")
            .append_pair("accounts-server", &server);
    }
    Redirect::to(back.as_str()).into_response()
}

fn issue(tokens: &mut Tokens, provider: &str, family: u64, ttl: i64) -> Value {
    tokens.next += 1;
    let access = format!("at-{provider}-{}-{}", tokens.next, rand::random::<u64>());
    let refresh = format!("rt-{provider}-{}-{}", tokens.next, rand::random::<u64>());
    tokens
        .access
        .insert(access.clone(), (provider.to_owned(), family, now() + ttl));
    tokens.refresh.insert(refresh.clone(), family);
    super::leaks::record("provider tokens", [access.as_str(), refresh.as_str()]);
    let mut body =
        json!({"access_token": access, "token_type": "bearer", "refresh_token": refresh});
    // Stripe Apps send no expires_in: grantry must assume the catalog's lifetime.
    if provider != "stripe" {
        body["expires_in"] = json!(ttl);
    }
    body
}

async fn token(State(fake): State<Fake>, Path(provider): Path<String>, body: String) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let settings = fake.settings.lock().unwrap().clone();
    let invalid_grant = || {
        (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "invalid_grant"})),
        )
            .into_response()
    };
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let mut tokens = fake.tokens.lock().unwrap();
            let code = form.get("code").cloned().unwrap_or_default();
            if tokens.codes.remove(&code).as_deref() != Some(provider.as_str()) {
                return invalid_grant();
            }
            fake.counters
                .code_redemptions
                .fetch_add(1, Ordering::SeqCst);
            tokens.next += 1;
            let family = tokens.next;
            axum::Json(issue(
                &mut tokens,
                &provider,
                family,
                settings.first_token_ttl,
            ))
            .into_response()
        }
        Some("refresh_token") => {
            fake.counters.refreshes.fetch_add(1, Ordering::SeqCst);
            let presented = form.get("refresh_token").cloned().unwrap_or_default();
            // The rotation happens at once; the answer comes after `refresh_delay`, so a
            // client that gives up meanwhile has lost the new tokens (the case to survive).
            let answer = {
                let mut tokens = fake.tokens.lock().unwrap();
                if settings.refuse_refresh {
                    None
                } else if let Some(family) = tokens.used_refresh.get(&presented).copied() {
                    // Reuse of a rotated token: a stolen-token signal; the whole family dies.
                    fake.counters
                        .family_revocations
                        .fetch_add(1, Ordering::SeqCst);
                    tokens.revoked_families.insert(family);
                    tokens.refresh.retain(|_, f| *f != family);
                    None
                } else if let Some(family) = tokens.refresh.remove(&presented) {
                    tokens.used_refresh.insert(presented, family);
                    Some(issue(
                        &mut tokens,
                        &provider,
                        family,
                        settings.refreshed_token_ttl,
                    ))
                } else {
                    None
                }
            };
            tokio::time::sleep(settings.refresh_delay).await;
            match answer {
                Some(body) => axum::Json(body).into_response(),
                None => invalid_grant(),
            }
        }
        _ => (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "unsupported_grant_type"})),
        )
            .into_response(),
    }
}

async fn revoke(State(fake): State<Fake>, body: String) -> StatusCode {
    fake.counters.revocations.fetch_add(1, Ordering::SeqCst);
    let _ = body;
    StatusCode::OK
}

/// Whether the request carries a live access token of `provider`.
fn authorized(fake: &Fake, provider: &str, headers: &HeaderMap) -> bool {
    let Some(value) = headers.get("authorization").and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let scheme = if provider == "zoho" {
        "Zoho-oauthtoken "
    } else {
        "Bearer "
    };
    let Some(token) = value.strip_prefix(scheme) else {
        return false;
    };
    let tokens = fake.tokens.lock().unwrap();
    tokens
        .access
        .get(token)
        .is_some_and(|(p, family, expires)| {
            p == provider && *expires > now() && !tokens.revoked_families.contains(family)
        })
}

/// Xero's invoice writes: `POST /api.xro/2.0/Invoices` creates (an `Idempotency-Key` repeated
/// returns the first invoice), `POST /api.xro/2.0/Invoices/{id}` with `Status: VOIDED` voids.
async fn api_write(
    State(fake): State<Fake>,
    Path((provider, path)): Path<(String, String)>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if !authorized(&fake, &provider, &headers) {
        return (StatusCode::UNAUTHORIZED, "unauthorized").into_response();
    }
    if provider != "xero"
        || headers.get("xero-tenant-id").and_then(|v| v.to_str().ok()) != Some("tenant-1")
    {
        return (StatusCode::NOT_FOUND, "no such write").into_response();
    }
    let Ok(request) = serde_json::from_str::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let mut written = fake.written.lock().unwrap();
    let one = &request["Invoices"][0];
    if path == "api.xro/2.0/Invoices" {
        let key = headers
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if let Some(id) = written.by_idempotency_key.get(&key) {
            return axum::Json(json!({"Invoices": [written.created[id].clone()]})).into_response();
        }
        let n = written.created.len() + 1;
        let id = format!("c0ffee{n:02}-0000-4000-8000-000000000000");
        let invoice = json!({
            "Type": "ACCREC", "InvoiceID": id, "InvoiceNumber": format!("INV-N{n:03}"),
            "Contact": {"Name": one["Contact"]["Name"], "EmailAddress": one["Contact"]["EmailAddress"]},
            "DateString": "2026-11-30T00:00:00", "DueDateString": format!("{}T00:00:00", one["DueDate"].as_str().unwrap_or_default()),
            "Status": "AUTHORISED", "CurrencyCode": one["CurrencyCode"],
            "Total": one["LineItems"][0]["UnitAmount"], "AmountDue": one["LineItems"][0]["UnitAmount"],
        });
        written.created.insert(id.clone(), invoice.clone());
        if !key.is_empty() {
            written.by_idempotency_key.insert(key, id);
        }
        return axum::Json(json!({"Invoices": [invoice]})).into_response();
    }
    let Some(id) = path.strip_prefix("api.xro/2.0/Invoices/") else {
        return (StatusCode::NOT_FOUND, "no such write").into_response();
    };
    let Some(invoice) = written.created.get_mut(id) else {
        return (StatusCode::NOT_FOUND, "no such invoice").into_response();
    };
    if one["Status"] == "VOIDED" {
        invoice["Status"] = json!("VOIDED");
    }
    axum::Json(json!({"Invoices": [invoice.clone()]})).into_response()
}

/// Invoice `i` (1-based): `i % 3` is 0 for an open one, 1 for a paid one, 2 for a draft or
/// void one (in each provider's words); the amount is `i × 10.01`.
struct Fixture {
    i: usize,
}

impl Fixture {
    fn kind(&self) -> usize {
        self.i % 3
    }
    fn minor(&self) -> i64 {
        self.i as i64 * 1001
    }
    fn decimal(&self) -> String {
        format!("{}.{:02}", self.minor() / 100, self.minor() % 100)
    }
    fn day(&self) -> usize {
        1 + self.i % 28
    }
    fn date(&self) -> String {
        format!("2026-01-{:02}", self.day())
    }
    fn due(&self) -> String {
        format!("2026-02-{:02}", self.day())
    }
    fn unix(&self) -> i64 {
        1_767_225_600 + (self.day() as i64 - 1) * 86_400
    }
}

/// How many of `n` fake invoices are open.
pub fn open_count(n: usize) -> usize {
    (1..=n).filter(|i| i % 3 == 0).count()
}

fn page_of<T>(items: Vec<T>, page: usize, size: usize) -> (Vec<T>, usize) {
    let pages = items.len().div_ceil(size).max(1);
    let chunk = items
        .into_iter()
        .skip((page - 1) * size)
        .take(size)
        .collect();
    (chunk, pages)
}

async fn api(
    State(fake): State<Fake>,
    Path((provider, path)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&fake, &provider, &headers) {
        return (StatusCode::UNAUTHORIZED, "unauthorized").into_response();
    }
    let busy = {
        let mut settings = fake.settings.lock().unwrap();
        (!settings.busy.is_empty()).then(|| settings.busy.remove(0))
    };
    if let Some(retry_after) = busy {
        fake.counters.busy_answers.fetch_add(1, Ordering::SeqCst);
        return (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", retry_after.to_string())],
            "slow down",
        )
            .into_response();
    }
    let n = PROVIDERS.iter().find(|(p, _)| *p == provider).unwrap().1;
    let all: Vec<Fixture> = (1..=n).map(|i| Fixture { i }).collect();
    let page: usize = query.get("page").and_then(|p| p.parse().ok()).unwrap_or(1);
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let body = match (provider.as_str(), path.as_str()) {
        ("stripe", "v1/invoices") => {
            let status = |f: &Fixture| ["open", "paid", "uncollectible"][f.kind()];
            let wanted = query.get("status").cloned();
            let mut rows: Vec<&Fixture> = all
                .iter()
                .filter(|f| wanted.as_deref().is_none_or(|w| w == status(f)))
                .collect();
            if let Some(after) = query.get("starting_after") {
                let at = rows
                    .iter()
                    .position(|f| format!("in_{:04}", f.i) == *after)
                    .unwrap();
                rows.drain(..=at);
            }
            let limit: usize = query["limit"].parse().unwrap();
            let has_more = rows.len() > limit;
            let data: Vec<Value> = rows.into_iter().take(limit).map(|f| json!({
                "id": format!("in_{:04}", f.i), "object": "invoice",
                "number": format!("F00D-{:04}", f.i), "customer_name": format!("Customer {}", f.i),
                "customer_email": format!("c{}@example.com", f.i), "total": f.minor(),
                "currency": "eur", "status": status(f), "created": f.unix(),
                "due_date": f.unix() + 30 * 86_400,
            })).collect();
            json!({"object": "list", "url": "/v1/invoices", "has_more": has_more, "data": data})
        }
        ("xero", p) if p.starts_with("api.xro/2.0/Invoices/") => {
            let id = p.trim_start_matches("api.xro/2.0/Invoices/");
            match fake.written.lock().unwrap().created.get(id) {
                Some(invoice) => json!({"Invoices": [invoice]}),
                None => return (StatusCode::NOT_FOUND, "no such invoice").into_response(),
            }
        }
        ("xero", "connections") => json!([
            {"id": "c0d1", "tenantId": "tenant-8", "tenantType": "PRACTICE", "tenantName": "A Practice"},
            {"id": "c0d2", "tenantId": "tenant-1", "tenantType": "ORGANISATION", "tenantName": "Demo Company (UK)"}
        ]),
        ("xero", "api.xro/2.0/Invoices") => {
            if header("xero-tenant-id") != Some("tenant-1") {
                return (StatusCode::FORBIDDEN, "no tenant").into_response();
            }
            let status = |f: &Fixture| ["AUTHORISED", "PAID", "DRAFT"][f.kind()];
            let wanted = query.get("Statuses").cloned();
            let rows: Vec<&Fixture> = all
                .iter()
                .filter(|f| wanted.as_deref().is_none_or(|w| w == status(f)))
                .collect();
            let (chunk, _) = page_of(rows, page, 100);
            let invoices: Vec<Value> = chunk.into_iter().map(|f| json!({
                "Type": "ACCREC", "InvoiceID": format!("9b1c{:04}-0000-4000-8000-000000000000", f.i),
                "InvoiceNumber": format!("INV-{:04}", f.i),
                "Contact": {"ContactID": "c-1", "Name": format!("Customer {}", f.i)},
                "DateString": format!("{}T00:00:00", f.date()),
                "DueDateString": format!("{}T00:00:00", f.due()),
                "Status": status(f), "CurrencyCode": "GBP",
                "Total": f.decimal().parse::<f64>().unwrap(), "AmountDue": 0,
            })).collect();
            json!({"Id": "x", "Status": "OK", "ProviderName": "grantry", "Invoices": invoices})
        }
        ("quickbooks", "v3/company/9130355/companyinfo/9130355") => {
            json!({"CompanyInfo": {"CompanyName": "Sandbox Company_US_1", "Id": "1"}, "time": "2026-01-01T00:00:00-08:00"})
        }
        ("quickbooks", "v3/company/9130355/query") => {
            let q = &query["query"];
            let start: usize = q
                .split("STARTPOSITION ")
                .nth(1)
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let max: usize = q
                .split("MAXRESULTS ")
                .nth(1)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            let rows: Vec<&Fixture> = all
                .iter()
                .filter(|f| {
                    if q.contains("Balance > '0'") {
                        f.kind() == 0
                    } else if q.contains("Balance = '0'") {
                        f.kind() != 0
                    } else {
                        true
                    }
                })
                .collect();
            let chunk: Vec<Value> = rows.into_iter().skip(start - 1).take(max).map(|f| json!({
                "Id": f.i.to_string(), "DocNumber": format!("{}", 1000 + f.i),
                "TxnDate": f.date(), "DueDate": f.due(),
                "CustomerRef": {"value": "1", "name": format!("Customer {}", f.i)},
                // Voiding zeroes an invoice's amounts.
                "TotalAmt": if f.kind() == 2 { 0.0 } else { f.decimal().parse::<f64>().unwrap() },
                "Balance": if f.kind() == 0 { f.decimal().parse::<f64>().unwrap() } else { 0.0 },
                "CurrencyRef": {"value": "USD", "name": "United States Dollar"},
            })).collect();
            if chunk.is_empty() {
                json!({"QueryResponse": {}, "time": "2026-01-01T00:00:00-08:00"})
            } else {
                json!({"QueryResponse": {"Invoice": chunk, "startPosition": start, "maxResults": max}})
            }
        }
        ("freshbooks", "auth/api/v1/users/me") => {
            json!({"response": {"id": 1, "email": "me@example.com",
            "business_memberships": [{"id": 1, "role": "owner", "business": {"id": 77, "name": "Acme Design", "account_id": "AbC12"}}]}})
        }
        ("freshbooks", "accounting/account/AbC12/invoices/invoices") => {
            let (chunk, pages) = page_of(all.iter().collect(), page, 100);
            let invoices: Vec<Value> = chunk
                .into_iter()
                .map(|f| {
                    json!({
                        "id": f.i, "invoiceid": f.i, "invoice_number": format!("{:07}", f.i),
                        "organization": format!("Customer {}", f.i),
                        "amount": {"amount": f.decimal(), "code": "CAD"},
                        "payment_status": (["unpaid", "paid", "unpaid"][f.kind()]),
                        "v3_status": (["sent", "paid", "draft"][f.kind()]),
                        "create_date": f.date(), "due_date": f.due(),
                    })
                })
                .collect();
            json!({"response": {"result": {"invoices": invoices, "page": page, "pages": pages, "per_page": 100, "total": n}}})
        }
        ("zoho", "invoice/v3/organizations") => {
            json!({"code": 0, "message": "success", "organizations": [
            {"organization_id": "10234695", "name": "Zillium Inc", "is_default_org": true}]})
        }
        ("zoho", "invoice/v3/invoices") => {
            if query.get("organization_id").map(String::as_str) != Some("10234695") {
                return (StatusCode::BAD_REQUEST, "organization").into_response();
            }
            let status = |f: &Fixture| ["overdue", "paid", "void"][f.kind()];
            let rows: Vec<&Fixture> = all
                .iter()
                .filter(|f| query.get("status").is_none_or(|s| s == status(f)))
                .collect();
            let total = rows.len();
            let (chunk, _) = page_of(rows, page, 200);
            let invoices: Vec<Value> = chunk.into_iter().map(|f| json!({
                "invoice_id": format!("98200000{:04}", f.i), "invoice_number": format!("INV-{:05}", f.i),
                "customer_name": format!("Customer {}", f.i), "status": status(f),
                "date": f.date(), "due_date": f.due(),
                "total": f.decimal().parse::<f64>().unwrap(), "currency_code": "INR",
            })).collect();
            json!({"code": 0, "message": "success", "invoices": invoices,
                "page_context": {"page": page, "per_page": 200, "has_more_page": page * 200 < total}})
        }
        ("sage", "v3.1/businesses") => {
            json!([{"id": "biz-1", "displayed_as": "Acme Ltd", "$path": "/businesses/biz-1"}])
        }
        ("sage", "v3.1/sales_invoices") => {
            if header("x-business") != Some("biz-1") {
                return (StatusCode::FORBIDDEN, "business").into_response();
            }
            let (chunk, pages) = page_of(all.iter().collect(), page, 100);
            let items: Vec<Value> = chunk.into_iter().map(|f| json!({
                "id": format!("si-{}", f.i), "displayed_as": format!("SI-{}", f.i),
                "invoice_number": format!("SI-{}", f.i),
                "contact": {"id": "c1", "displayed_as": format!("Customer {}", f.i)},
                "date": f.date(), "due_date": f.due(), "total_amount": f.decimal(),
                "currency": {"id": "GBP", "displayed_as": "Pound Sterling (GBP)"},
                "status": {"id": (["PART_PAID", "PAID", "VOID"][f.kind()]), "displayed_as": "x"},
            })).collect();
            let next = (page < pages).then(|| format!("/sales_invoices?page={}", page + 1));
            json!({"$total": n, "$page": page, "$next": next, "$back": null, "$itemsPerPage": 100, "$items": items})
        }
        _ => {
            return (
                StatusCode::NOT_FOUND,
                format!("no fake for {provider}/{path}"),
            )
                .into_response();
        }
    };
    axum::Json(body).into_response()
}
