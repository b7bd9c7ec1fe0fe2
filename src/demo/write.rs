//! The demo billing API's writes: `POST /api/invoices` (create; an `Idempotency-Key` header is
//! required and a repeated key returns the invoice created the first time), `GET
//! /api/invoices/{id}` and `POST /api/invoices/{id}/void`. Writes need `invoices:write`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use super::api::authenticate;
use super::book::VoidError;
use super::invoices::DemoInvoice;
use super::{DEMO_SCOPE, DEMO_WRITE_SCOPE, Shared, bump};
use crate::seal::digest;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct NewInvoice {
    customer_email: String,
    customer_name: String,
    total_cents: u64,
    currency: String,
    due: String,
    #[serde(default)]
    description: Option<String>,
}

impl NewInvoice {
    /// Within the sizes grantry's own validator allows: anything larger is refused, not kept.
    fn is_valid(&self) -> bool {
        self.customer_email.contains('@')
            && self.customer_email.len() <= 254
            && !self.customer_name.trim().is_empty()
            && self.customer_name.chars().count() <= 200
            && self.total_cents > 0
            && self.currency.len() == 3
            && self.due.len() == 10
            && self
                .description
                .as_ref()
                .is_none_or(|d| d.chars().count() <= 500)
    }
}

fn refuse(status: StatusCode, code: &str) -> Response {
    (status, Json(json!({ "error": code }))).into_response()
}

/// The user behind a request whose token carries `scope`.
fn user_with(
    inner: &super::Inner,
    headers: &HeaderMap,
    scope: &str,
) -> Result<String, Box<Response>> {
    let claims = authenticate(inner, headers).map_err(|e| Box::new(e.into_response()))?;
    if !claims.scope.split(' ').any(|s| s == scope) {
        return Err(Box::new(refuse(
            StatusCode::FORBIDDEN,
            "insufficient_scope",
        )));
    }
    Ok(claims.user)
}

pub(super) async fn create_invoice(
    State(inner): State<Shared>,
    headers: HeaderMap,
    body: Result<Json<NewInvoice>, axum::extract::rejection::JsonRejection>,
) -> Response {
    bump(&inner.counters.api_requests);
    let user = match user_with(&inner, &headers, DEMO_WRITE_SCOPE) {
        Ok(user) => user,
        Err(response) => return *response,
    };
    let Some(key) = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .filter(|k| !k.is_empty() && k.len() <= 255)
    else {
        return refuse(StatusCode::BAD_REQUEST, "idempotency_key_required");
    };
    let Ok(Json(new)) = body else {
        return refuse(StatusCode::BAD_REQUEST, "invalid_invoice");
    };
    if !new.is_valid() {
        return refuse(StatusCode::UNPROCESSABLE_ENTITY, "invalid_invoice");
    }
    let (invoice, created) = inner.book.create(&user, key, |n| DemoInvoice {
        id: format!(
            "in_new_{}",
            &digest("demo/created", &[user.as_bytes(), key.as_bytes()])[..16]
        ),
        number: format!("DEMO-N{:04}", n + 1),
        customer_name: new.customer_name.trim().to_owned(),
        customer_email: Some(new.customer_email),
        total_cents: new.total_cents,
        currency: new.currency.to_ascii_lowercase(),
        state: "open",
        created: time::OffsetDateTime::now_utc().date().to_string(),
        due: new.due,
        description: new.description,
    });
    if !created {
        return (StatusCode::OK, Json(invoice)).into_response();
    }
    bump(&inner.counters.invoices_created);
    (StatusCode::CREATED, Json(invoice)).into_response()
}

pub(super) async fn get_invoice(
    State(inner): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    bump(&inner.counters.api_requests);
    let user = match user_with(&inner, &headers, DEMO_SCOPE) {
        Ok(user) => user,
        Err(response) => return *response,
    };
    match inner.book.invoices(&user).into_iter().find(|i| i.id == id) {
        Some(invoice) => Json(invoice).into_response(),
        None => refuse(StatusCode::NOT_FOUND, "not_found"),
    }
}

pub(super) async fn void_invoice(
    State(inner): State<Shared>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    bump(&inner.counters.api_requests);
    let user = match user_with(&inner, &headers, DEMO_WRITE_SCOPE) {
        Ok(user) => user,
        Err(response) => return *response,
    };
    match inner.book.void(&user, &id) {
        Ok(invoice) => Json(invoice).into_response(),
        Err(VoidError::NotFound) => refuse(StatusCode::NOT_FOUND, "not_found"),
        Err(VoidError::Paid) => refuse(StatusCode::CONFLICT, "invoice_paid"),
    }
}
