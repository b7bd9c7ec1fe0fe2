//! The demo billing API: `GET {api_base}/invoices?status=…` (one page), `POST
//! {api_base}/invoices` with an `Idempotency-Key`, `GET`/`POST …/invoices/{id}[/void]`.

use serde::Deserialize;

use reqwest::Method;
use serde_json::json;

use super::http_json::{Auth, JsonRequest, endpoint, get_json, send_json};
use super::{Api, Page};
use crate::ids::AccountId;
use crate::providers::Account;
use crate::providers::invoice::{ApiError, Invoice, InvoiceStatus, NewInvoice, StatusFilter};

/// `GET /api/me`.
#[derive(Deserialize)]
struct Me {
    user: AccountId,
}

/// The account a demo grant reaches: the user named at the demo's consent page (each name
/// has its own invoices, as each company has at a real provider).
pub(super) async fn pick_account(api: &Api<'_>) -> Result<Account, ApiError> {
    let url = endpoint(&api.base()?, &["me"])?;
    let me: Me = get_json(api, url, Auth::Bearer, &[]).await?;
    Ok(Account {
        name: me.user.to_string(),
        id: me.user,
    })
}

#[derive(Deserialize)]
struct DemoList {
    invoices: Vec<DemoInvoice>,
}

#[derive(Deserialize)]
struct DemoInvoice {
    id: String,
    number: String,
    customer_name: String,
    total_cents: i64,
    currency: String,
    state: String,
    created: String,
    due: Option<String>,
}

pub(super) async fn list_invoices(
    api: &Api<'_>,
    filter: StatusFilter,
    cursor: Option<&str>,
) -> Result<Page, ApiError> {
    if cursor.is_some() {
        return Err(ApiError::BadCursor); // the demo answers in one page
    }
    let mut url = endpoint(&api.base()?, &["invoices"])?;
    url.query_pairs_mut().append_pair("status", filter.as_str());
    let list: DemoList = get_json(api, url, Auth::Bearer, &[]).await?;
    let invoices = list
        .invoices
        .into_iter()
        .map(normalize)
        .collect::<Result<_, _>>()?;
    Ok(Page {
        invoices,
        next_cursor: None,
    })
}

pub(super) async fn create_invoice(
    api: &Api<'_>,
    new: &NewInvoice,
    idempotency_key: &str,
) -> Result<Invoice, ApiError> {
    let url = endpoint(&api.base()?, &["invoices"])?;
    let body = json!({
        "customer_email": new.customer_email,
        "customer_name": new.customer_name,
        "total_cents": new.amount_minor,
        "currency": new.currency.to_ascii_lowercase(),
        "due": new.due_date,
        "description": new.description,
    });
    let headers = [("idempotency-key", idempotency_key)];
    let raw: DemoInvoice = send_json(
        api,
        &JsonRequest {
            headers: &headers,
            body: Some(&body),
            ..JsonRequest::new(Method::POST, url)
        },
    )
    .await?;
    normalize(raw)
}

pub(super) async fn get_invoice(api: &Api<'_>, id: &str) -> Result<Invoice, ApiError> {
    let url = endpoint(&api.base()?, &["invoices", id])?;
    normalize(get_json(api, url, Auth::Bearer, &[]).await?)
}

pub(super) async fn void_invoice(api: &Api<'_>, id: &str) -> Result<Invoice, ApiError> {
    let url = endpoint(&api.base()?, &["invoices", id, "void"])?;
    normalize(send_json(api, &JsonRequest::new(Method::POST, url)).await?)
}

fn normalize(raw: DemoInvoice) -> Result<Invoice, ApiError> {
    let status = match raw.state.as_str() {
        "open" => InvoiceStatus::Open,
        "paid" => InvoiceStatus::Paid,
        "void" => InvoiceStatus::Void,
        other => {
            return Err(ApiError::BadResponse(format!(
                "unknown invoice state `{other}`"
            )));
        }
    };
    Ok(Invoice {
        id: raw.id,
        number: raw.number,
        customer: raw.customer_name,
        amount_minor: raw.total_cents,
        currency: raw.currency.to_ascii_uppercase(),
        status,
        issue_date: raw.created,
        due_date: raw.due,
    })
}
