//! Paddle Billing: connected with an API key (`Authorization: Bearer pdl_…`, `Paddle-Version:
//! 1`). Its invoices are transactions, `GET /transactions` (statuses draft, ready, billed,
//! paid, completed, canceled, past_due), paged by the `after` cursor of `meta.pagination.next`.
//! Totals are strings in the currency's minor units. A refused key is a 403 (`invalid_token`),
//! like a key without `transaction.read`: either way the key cannot serve grantry. The key is
//! the account: there is nothing to pick.

use serde::Deserialize;

use super::http_json::{Auth, endpoint, get_json};
use super::{Api, Page, admitted, iso_date, unknown_status};
use crate::providers::invoice::{ApiError, Invoice, InvoiceStatus, StatusFilter};

const PAGE_SIZE: &str = "50";
/// Pinned: a new Paddle API version cannot change what this adapter reads.
const VERSION: (&str, &str) = ("paddle-version", "1");

#[derive(Deserialize)]
struct List {
    data: Vec<Transaction>,
    meta: Meta,
}

#[derive(Deserialize)]
struct Meta {
    pagination: Pagination,
}

#[derive(Deserialize)]
struct Pagination {
    next: Option<String>,
    has_more: bool,
}

#[derive(Deserialize)]
struct Transaction {
    id: String,
    status: String,
    invoice_number: Option<String>,
    currency_code: String,
    customer_id: Option<String>,
    customer: Option<Customer>,
    details: Details,
    billed_at: Option<String>,
    created_at: String,
}

#[derive(Deserialize)]
struct Customer {
    name: Option<String>,
    email: Option<String>,
}

#[derive(Deserialize)]
struct Details {
    totals: Totals,
}

#[derive(Deserialize)]
struct Totals {
    grand_total: serde_json::Value,
}

pub(super) async fn list_invoices(
    api: &Api<'_>,
    filter: StatusFilter,
    cursor: Option<&str>,
) -> Result<Page, ApiError> {
    let mut url = endpoint(&api.base()?, &["transactions"])?;
    {
        let mut query = url.query_pairs_mut();
        query.append_pair("per_page", PAGE_SIZE);
        query.append_pair("include", "customer");
        match filter {
            StatusFilter::Open => query.append_pair("status", "billed,past_due"),
            StatusFilter::Paid => query.append_pair("status", "paid,completed"),
            StatusFilter::All => &mut query,
        };
        if let Some(after) = cursor {
            if !is_transaction_id(after) {
                return Err(ApiError::BadCursor);
            }
            query.append_pair("after", after);
        }
    }
    let list: List = get_json(api, url, Auth::Bearer, &[VERSION]).await?;
    let next_cursor = match list.meta.pagination {
        Pagination {
            has_more: true,
            next: Some(next),
        } => Some(after_of(&next)?),
        _ => None,
    };
    // Paddle filtered by status already.
    let invoices = admitted(list.data, normalize, StatusFilter::All)?;
    Ok(Page {
        invoices,
        next_cursor,
    })
}

/// The one cheap call that tells whether a key can list transactions as `list_invoices` does
/// (with their customers, which takes `customer.read` too).
pub(super) async fn check_key(api: &Api<'_>) -> Result<(), ApiError> {
    let mut url = endpoint(&api.base()?, &["transactions"])?;
    url.query_pairs_mut()
        .append_pair("per_page", "1")
        .append_pair("include", "customer");
    let _: List = get_json(api, url, Auth::Bearer, &[VERSION]).await?;
    Ok(())
}

fn is_transaction_id(text: &str) -> bool {
    text.len() <= 64
        && text
            .strip_prefix("txn_")
            .is_some_and(|rest| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// The `after` cursor of Paddle's `next` URL.
fn after_of(next: &str) -> Result<String, ApiError> {
    url::Url::parse(next)
        .ok()
        .and_then(|url| {
            url.query_pairs()
                .find(|(name, _)| name == "after")
                .map(|(_, value)| value.into_owned())
        })
        .filter(|after| is_transaction_id(after))
        .ok_or_else(|| ApiError::BadResponse("meta.pagination.next has no `after`".into()))
}

fn normalize(raw: Transaction) -> Result<Option<Invoice>, ApiError> {
    let status = match raw.status.as_str() {
        "draft" | "ready" => InvoiceStatus::Draft,
        "billed" | "past_due" => InvoiceStatus::Open,
        "paid" | "completed" => InvoiceStatus::Paid,
        "canceled" => InvoiceStatus::Void,
        other => return Ok(unknown_status("paddle", other)),
    };
    let customer = raw
        .customer
        .and_then(|c| c.name.or(c.email))
        .or(raw.customer_id)
        .unwrap_or_default();
    let amount_minor = minor(&raw.details.totals.grand_total)?;
    Ok(Some(Invoice {
        number: raw.invoice_number.unwrap_or_else(|| raw.id.clone()),
        id: raw.id,
        customer,
        amount_minor,
        currency: raw.currency_code.to_ascii_uppercase(),
        status,
        issue_date: iso_date(raw.billed_at.as_deref().unwrap_or(&raw.created_at))?,
        due_date: None,
    }))
}

/// Paddle's totals are already in minor units, as a string of digits.
fn minor(total: &serde_json::Value) -> Result<i64, ApiError> {
    total
        .as_str()
        .and_then(|digits| digits.parse::<i64>().ok())
        .ok_or_else(|| ApiError::BadResponse("details.totals.grand_total is not an amount".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_cursor_is_the_after_of_paddles_next_url() {
        let next = "https://api.paddle.com/transactions?after=txn_01h8&per_page=50";
        assert_eq!(after_of(next).unwrap(), "txn_01h8");
        assert!(after_of("https://api.paddle.com/transactions?per_page=50").is_err());
        assert!(after_of("https://api.paddle.com/transactions?after=ctm_1").is_err());
        assert!(!is_transaction_id("txn_"));
        assert!(!is_transaction_id("txn_a&b=c"));
    }

    #[test]
    fn transactions_map_to_invoices_by_their_lifecycle() {
        let raw = |status: &str| Transaction {
            id: "txn_1".into(),
            status: status.into(),
            invoice_number: Some("325-10566".into()),
            currency_code: "eur".into(),
            customer_id: Some("ctm_1".into()),
            customer: None,
            details: Details {
                totals: Totals {
                    grand_total: "11900".into(),
                },
            },
            billed_at: Some("2026-11-02T10:00:00.000Z".into()),
            created_at: "2026-11-01T09:00:00Z".into(),
        };
        let invoice = normalize(raw("past_due")).unwrap().unwrap();
        assert_eq!(invoice.status, InvoiceStatus::Open);
        assert_eq!(
            (invoice.amount_minor, invoice.currency.as_str()),
            (11900, "EUR")
        );
        assert_eq!(invoice.issue_date, "2026-11-02");
        assert_eq!(invoice.customer, "ctm_1");
        assert_eq!(
            normalize(raw("completed")).unwrap().unwrap().status,
            InvoiceStatus::Paid
        );
        assert_eq!(
            normalize(raw("canceled")).unwrap().unwrap().status,
            InvoiceStatus::Void
        );
        assert!(
            normalize(raw("refunded")).unwrap().is_none(),
            "unknown: left out"
        );
    }
}
