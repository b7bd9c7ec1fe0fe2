//! Chargebee: connected with an API key and the site's name (each site's API lives at
//! `https://{site}.chargebee.com/api/v2`, the connection's account), the key as the HTTP Basic
//! user name with an empty password. `GET /invoices` (statuses paid, posted, payment_due,
//! not_paid, voided, pending), filtered with `status[in]`, paged by the opaque `next_offset`;
//! totals in the currency's minor units and dates in unix seconds. A refused key is a 401
//! (`api_authentication_failed`); an unknown site a 404.

use serde::Deserialize;

use super::http_json::{Auth, endpoint, get_json};
use super::{Api, Page, admitted, unix_date, unknown_status};
use crate::providers::invoice::{ApiError, Invoice, InvoiceStatus, StatusFilter};

const PAGE_SIZE: &str = "100";

#[derive(Deserialize)]
struct List {
    list: Vec<Entry>,
    next_offset: Option<String>,
}

#[derive(Deserialize)]
struct Entry {
    invoice: ChargebeeInvoice,
}

#[derive(Deserialize)]
struct ChargebeeInvoice {
    id: String,
    customer_id: String,
    status: String,
    date: Option<i64>,
    due_date: Option<i64>,
    total: Option<i64>,
    currency_code: String,
    billing_address: Option<Address>,
}

#[derive(Deserialize)]
struct Address {
    company: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
}

pub(super) async fn list_invoices(
    api: &Api<'_>,
    filter: StatusFilter,
    cursor: Option<&str>,
) -> Result<Page, ApiError> {
    let mut url = endpoint(&api.base()?, &["invoices"])?;
    {
        let mut query = url.query_pairs_mut();
        query.append_pair("limit", PAGE_SIZE);
        match filter {
            StatusFilter::Open => {
                query.append_pair("status[in]", r#"["posted","payment_due","not_paid"]"#)
            }
            StatusFilter::Paid => query.append_pair("status[is]", "paid"),
            StatusFilter::All => &mut query,
        };
        if let Some(offset) = cursor {
            if !is_offset(offset) {
                return Err(ApiError::BadCursor);
            }
            query.append_pair("offset", offset);
        }
    }
    let list: List = get_json(api, url, Auth::BasicKey, &[]).await?;
    let invoices = list.list.into_iter().map(|entry| entry.invoice).collect();
    Ok(Page {
        // Chargebee filtered by status already.
        invoices: admitted(invoices, normalize, StatusFilter::All)?,
        next_cursor: list.next_offset.filter(|offset| is_offset(offset)),
    })
}

/// The one cheap call that tells whether a key (at its site) can list invoices.
pub(super) async fn check_key(api: &Api<'_>) -> Result<(), ApiError> {
    let mut url = endpoint(&api.base()?, &["invoices"])?;
    url.query_pairs_mut().append_pair("limit", "1");
    let _: List = get_json(api, url, Auth::BasicKey, &[]).await?;
    Ok(())
}

/// Chargebee's `next_offset` is opaque (a JSON array in a string): passed back as it is, if it
/// is short printable ASCII.
fn is_offset(text: &str) -> bool {
    (1..=512).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic())
}

fn normalize(raw: ChargebeeInvoice) -> Result<Option<Invoice>, ApiError> {
    let status = match raw.status.as_str() {
        "pending" => InvoiceStatus::Draft,
        "posted" | "payment_due" | "not_paid" => InvoiceStatus::Open,
        "paid" => InvoiceStatus::Paid,
        "voided" => InvoiceStatus::Void,
        other => return Ok(unknown_status("chargebee", other)),
    };
    let customer = raw
        .billing_address
        .and_then(|a| {
            a.company.or_else(|| {
                let name = [a.first_name, a.last_name].into_iter().flatten();
                Some(name.collect::<Vec<_>>().join(" ")).filter(|n| !n.is_empty())
            })
        })
        .unwrap_or(raw.customer_id);
    let date = raw
        .date
        .ok_or_else(|| ApiError::BadResponse("an invoice without a date".into()))?;
    Ok(Some(Invoice {
        number: raw.id.clone(),
        id: raw.id,
        customer,
        amount_minor: raw.total.unwrap_or(0),
        currency: raw.currency_code.to_ascii_uppercase(),
        status,
        issue_date: unix_date(date)?,
        due_date: raw.due_date.map(unix_date).transpose()?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(status: &str) -> ChargebeeInvoice {
        ChargebeeInvoice {
            id: "42".into(),
            customer_id: "cust_1".into(),
            status: status.into(),
            date: Some(1_793_606_400),
            due_date: None,
            total: Some(2_999),
            currency_code: "usd".into(),
            billing_address: Some(Address {
                company: None,
                first_name: Some("Ada".into()),
                last_name: Some("Lovelace".into()),
            }),
        }
    }

    #[test]
    fn invoices_map_by_their_chargebee_status() {
        let invoice = normalize(raw("payment_due")).unwrap().unwrap();
        assert_eq!(invoice.status, InvoiceStatus::Open);
        assert_eq!(invoice.customer, "Ada Lovelace");
        assert_eq!(invoice.issue_date, "2026-11-02");
        assert_eq!(
            (invoice.amount_minor, invoice.currency.as_str()),
            (2_999, "USD")
        );
        assert_eq!(
            normalize(raw("voided")).unwrap().unwrap().status,
            InvoiceStatus::Void
        );
        assert_eq!(
            normalize(raw("pending")).unwrap().unwrap().status,
            InvoiceStatus::Draft
        );
        assert!(
            normalize(raw("written_off")).unwrap().is_none(),
            "unknown: left out"
        );
    }

    #[test]
    fn an_offset_is_passed_back_only_as_short_printable_text() {
        assert!(is_offset(r#"["1517505643000","12"]"#));
        assert!(!is_offset(""));
        assert!(!is_offset("a b"));
        assert!(!is_offset(&"x".repeat(513)));
    }
}
