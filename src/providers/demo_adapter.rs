//! Invoice adapter for the demo billing API (`GET {api_base}/invoices?status=…`).

use serde::Deserialize;

use super::Provider;
use super::http::{OutboundError, read_capped, transport_reason};
use super::invoice::{ApiError, Invoice, InvoiceStatus, StatusFilter};

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

/// Lists invoices with the caller's access token.
pub async fn list_invoices(
    http: &reqwest::Client,
    provider: &Provider,
    access_token: &str,
    filter: StatusFilter,
) -> Result<Vec<Invoice>, ApiError> {
    let mut url = provider.api_base.clone();
    url.path_segments_mut()
        .map_err(|_| ApiError::BadResponse("api_base cannot take a path".into()))?
        .pop_if_empty()
        .push("invoices");
    url.query_pairs_mut().append_pair("status", filter.as_str());
    let response = http
        .get(url)
        .bearer_auth(access_token)
        .send()
        .await
        .map_err(|e| ApiError::Unavailable(transport_reason(&e)))?;
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED {
        return Err(ApiError::Unauthorized);
    }
    if !status.is_success() {
        return Err(ApiError::Unavailable(
            OutboundError::Status(status.as_u16()).to_string(),
        ));
    }
    let body = read_capped(response)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    let list: DemoList =
        serde_json::from_slice(&body).map_err(|e| ApiError::BadResponse(e.to_string()))?;
    list.invoices.into_iter().map(normalize).collect()
}

fn normalize(raw: DemoInvoice) -> Result<Invoice, ApiError> {
    let status = match raw.state.as_str() {
        "open" => InvoiceStatus::Open,
        "paid" => InvoiceStatus::Paid,
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
