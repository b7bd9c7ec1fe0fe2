//! The fakes' invoice APIs, each in its provider's documented response shape, over
//! generated fixtures (`Fixture`), with each provider's pagination and status words; and
//! Xero's invoice writes, to either organisation.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::{Fake, Need, PROVIDERS, authorized, insufficient_scope, scope_allows};

/// Xero's `DELETE /connections/{id}`: ends one organisation's connection (recorded).
pub(super) async fn api_delete(
    State(fake): State<Fake>,
    Path((provider, path)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    if !authorized(&fake, &provider, &headers) {
        return (StatusCode::UNAUTHORIZED, "unauthorized").into_response();
    }
    let tenant = path
        .strip_prefix("connections/c0d-")
        .filter(|t| super::XERO_TENANTS.iter().any(|(id, _)| id == t));
    match (provider.as_str(), tenant) {
        ("xero", Some(tenant)) => {
            fake.counters
                .revoked_tenants
                .lock()
                .unwrap()
                .push(tenant.to_owned());
            StatusCode::NO_CONTENT.into_response()
        }
        _ => (StatusCode::NOT_FOUND, "no such connection").into_response(),
    }
}

/// Xero's invoice writes: `POST /api.xro/2.0/Invoices` creates (an `Idempotency-Key` repeated
/// returns the first invoice), `POST /api.xro/2.0/Invoices/{id}` with `Status: VOIDED` voids.
pub(super) async fn api_write(
    State(fake): State<Fake>,
    Path((provider, path)): Path<(String, String)>,
    headers: HeaderMap,
    body: String,
) -> Response {
    if !authorized(&fake, &provider, &headers) {
        return (StatusCode::UNAUTHORIZED, "unauthorized").into_response();
    }
    if !scope_allows(&fake, &provider, &headers, Need::Write) {
        fake.counters
            .refused_for_scope
            .fetch_add(1, Ordering::SeqCst);
        return insufficient_scope();
    }
    // Either organisation takes writes (to the one the `xero-tenant-id` header names); the
    // invoices written are one set, so an id means an invoice in both, as ids can repeat
    // across a provider's companies.
    let tenant = headers.get("xero-tenant-id").and_then(|v| v.to_str().ok());
    if provider != "xero"
        || !super::XERO_TENANTS
            .iter()
            .any(|(id, _)| Some(*id) == tenant)
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
        // Xero refuses to change a voided invoice (a ValidationException).
        if invoice["Status"] == "VOIDED" {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"Type": "ValidationException",
                    "Message": "Invoice not of valid status for modification"})),
            )
                .into_response();
        }
        invoice["Status"] = json!("VOIDED");
        let voided = invoice.clone();
        written.voids += 1;
        return axum::Json(json!({"Invoices": [voided]})).into_response();
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

pub(super) async fn api(
    State(fake): State<Fake>,
    Path((provider, path)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    if let Some(parent) = headers.get("traceparent").and_then(|v| v.to_str().ok()) {
        fake.counters
            .traceparents
            .lock()
            .unwrap()
            .push(parent.to_owned());
    }
    if !authorized(&fake, &provider, &headers) {
        return (StatusCode::UNAUTHORIZED, "unauthorized").into_response();
    }
    if !path.starts_with("connections") && !scope_allows(&fake, &provider, &headers, Need::Read) {
        fake.counters
            .refused_for_scope
            .fetch_add(1, Ordering::SeqCst);
        return insufficient_scope();
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
        ("xero", "connections") => match query.get("authEventId") {
            // The organisations that sign-in connected.
            Some(event) => match fake.tenant_of_event(event) {
                Some(tenant) => json!([xero_connection(&tenant)]),
                None => json!([]),
            },
            None => json!([
                {"id": "c0d1", "tenantId": "tenant-8", "tenantType": "PRACTICE", "tenantName": "A Practice"},
                xero_connection("tenant-1"),
                xero_connection("tenant-2")
            ]),
        },
        ("xero", "api.xro/2.0/Invoices") => {
            // Each organisation has its own invoices: the second's numbers start `INV-B`.
            let (prefix, all) = match header("xero-tenant-id") {
                Some("tenant-1") => ("INV-", all),
                Some("tenant-2") => ("INV-B", all.into_iter().take(7).collect()),
                _ => return (StatusCode::FORBIDDEN, "no tenant").into_response(),
            };
            let status = |f: &Fixture| ["AUTHORISED", "PAID", "DRAFT"][f.kind()];
            let wanted = query.get("Statuses").cloned();
            let rows: Vec<&Fixture> = all
                .iter()
                .filter(|f| wanted.as_deref().is_none_or(|w| w == status(f)))
                .collect();
            let (chunk, _) = page_of(rows, page, 100);
            let invoices: Vec<Value> = chunk.into_iter().map(|f| json!({
                "Type": "ACCREC", "InvoiceID": format!("9b1c{:04}-0000-4000-8000-000000000000", f.i),
                "InvoiceNumber": format!("{prefix}{:04}", f.i),
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

/// A `GET /connections` entry for one of the fake's Xero organisations.
fn xero_connection(tenant: &str) -> Value {
    let (id, name) = super::XERO_TENANTS
        .iter()
        .find(|(id, _)| *id == tenant)
        .expect("a known organisation");
    json!({"id": format!("c0d-{id}"), "tenantId": id, "tenantType": "ORGANISATION", "tenantName": name})
}
