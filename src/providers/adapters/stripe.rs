//! Stripe: `GET /v1/invoices` (statuses draft, open, paid, uncollectible, void), cursor
//! pagination with `starting_after` and `has_more`, amounts already in minor units, times in
//! unix seconds. The OAuth token is the account: there is nothing to pick after connect.

use serde::Deserialize;

use super::http_json::{Auth, endpoint, get_json};
use super::{Api, Page, admitted, unix_date, unknown_status};
use crate::providers::invoice::{ApiError, Invoice, InvoiceStatus, StatusFilter};

const PAGE_SIZE: &str = "100";

#[derive(Deserialize)]
struct List {
    data: Vec<StripeInvoice>,
    has_more: bool,
}

#[derive(Deserialize)]
struct StripeInvoice {
    id: String,
    number: Option<String>,
    customer_name: Option<String>,
    customer_email: Option<String>,
    total: i64,
    currency: String,
    status: Option<String>,
    created: i64,
    due_date: Option<i64>,
}

pub(super) async fn list_invoices(
    api: &Api<'_>,
    filter: StatusFilter,
    cursor: Option<&str>,
) -> Result<Page, ApiError> {
    let mut url = endpoint(&api.base()?, &["v1", "invoices"])?;
    {
        let mut query = url.query_pairs_mut();
        query.append_pair("limit", PAGE_SIZE);
        match filter {
            StatusFilter::Open => query.append_pair("status", "open"),
            StatusFilter::Paid => query.append_pair("status", "paid"),
            StatusFilter::All => &mut query,
        };
        if let Some(after) = cursor {
            if !after.starts_with("in_") || after.len() > 255 {
                return Err(ApiError::BadCursor);
            }
            query.append_pair("starting_after", after);
        }
    }
    let list: List = get_json(api, url, Auth::Bearer, &[]).await?;
    let next_cursor = if list.has_more {
        list.data.last().map(|i| i.id.clone())
    } else {
        None
    };
    // Stripe filtered by status already.
    let invoices = admitted(list.data, normalize, StatusFilter::All)?;
    Ok(Page {
        invoices,
        next_cursor,
    })
}

fn normalize(raw: StripeInvoice) -> Result<Option<Invoice>, ApiError> {
    let status = match raw.status.as_deref() {
        Some("draft") | None => InvoiceStatus::Draft,
        Some("open") => InvoiceStatus::Open,
        Some("paid") => InvoiceStatus::Paid,
        Some("void") => InvoiceStatus::Void,
        Some("uncollectible") => InvoiceStatus::Uncollectible,
        Some(other) => return Ok(unknown_status("stripe", other)),
    };
    Ok(Some(Invoice {
        number: raw.number.unwrap_or_else(|| raw.id.clone()),
        id: raw.id,
        customer: raw.customer_name.or(raw.customer_email).unwrap_or_default(),
        amount_minor: raw.total,
        currency: raw.currency.to_ascii_uppercase(),
        status,
        issue_date: unix_date(raw.created)?,
        due_date: raw.due_date.map(unix_date).transpose()?,
    }))
}
