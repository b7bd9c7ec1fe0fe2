//! Xero: the tenant comes from `GET /connections` after connect (a grant can reach several
//! organisations; the first organisation is used and named). Invoices: sales invoices
//! (`Type=="ACCREC"`) from `GET /api.xro/2.0/Invoices` with the `xero-tenant-id` header,
//! 100 per `page`; statuses DRAFT/SUBMITTED, AUTHORISED, PAID, VOIDED, DELETED.

use serde::Deserialize;

use super::http_json::{Auth, endpoint, get_json};
use super::{Api, Page, amount, iso_date, page_number, unknown_status};
use crate::providers::Account;
use crate::providers::invoice::{ApiError, Invoice, InvoiceStatus, StatusFilter};

const PAGE_SIZE: usize = 100;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    tenant_id: String,
    tenant_name: Option<String>,
    tenant_type: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Invoices {
    invoices: Vec<XeroInvoice>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct XeroInvoice {
    #[serde(rename = "InvoiceID")]
    invoice_id: String,
    invoice_number: Option<String>,
    contact: Option<Contact>,
    total: serde_json::Value,
    currency_code: String,
    status: String,
    date_string: String,
    due_date_string: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Contact {
    name: Option<String>,
}

pub async fn pick_account(api: &Api<'_>) -> Result<Account, ApiError> {
    let url = endpoint(&api.provider.api_base, &["connections"])?;
    let connections: Vec<Connection> = get_json(api, url, Auth::Bearer, &[]).await?;
    connections
        .into_iter()
        .find(|c| c.tenant_type == "ORGANISATION")
        .map(|c| Account {
            name: c.tenant_name.unwrap_or_else(|| c.tenant_id.clone()),
            id: c.tenant_id,
        })
        .ok_or_else(|| ApiError::BadResponse("the grant reaches no Xero organisation".into()))
}

pub async fn list_invoices(
    api: &Api<'_>,
    filter: StatusFilter,
    cursor: Option<&str>,
) -> Result<Page, ApiError> {
    let tenant = api.account()?;
    let page = page_number(cursor)?;
    let mut url = endpoint(&api.provider.api_base, &["api.xro", "2.0", "Invoices"])?;
    {
        let mut query = url.query_pairs_mut();
        query.append_pair("where", "Type==\"ACCREC\"");
        query.append_pair("page", &page.to_string());
        match filter {
            StatusFilter::Open => query.append_pair("Statuses", "AUTHORISED"),
            StatusFilter::Paid => query.append_pair("Statuses", "PAID"),
            StatusFilter::All => &mut query,
        };
    }
    let list: Invoices =
        get_json(api, url, Auth::Bearer, &[("xero-tenant-id", &tenant.id)]).await?;
    let full = list.invoices.len() >= PAGE_SIZE;
    let mut invoices = Vec::new();
    for raw in list.invoices {
        if let Some(invoice) = normalize(raw)? {
            invoices.push(invoice);
        }
    }
    Ok(Page {
        invoices,
        next_cursor: full.then(|| (page + 1).to_string()),
    })
}

/// `None` for deleted invoices, which Xero keeps but nobody should see.
fn normalize(raw: XeroInvoice) -> Result<Option<Invoice>, ApiError> {
    let status = match raw.status.as_str() {
        "DRAFT" | "SUBMITTED" => InvoiceStatus::Draft,
        "AUTHORISED" => InvoiceStatus::Open,
        "PAID" => InvoiceStatus::Paid,
        "VOIDED" => InvoiceStatus::Void,
        "DELETED" => return Ok(None),
        other => return Ok(unknown_status("xero", other)),
    };
    let currency = raw.currency_code.to_ascii_uppercase();
    Ok(Some(Invoice {
        number: raw.invoice_number.unwrap_or_else(|| raw.invoice_id.clone()),
        id: raw.invoice_id,
        customer: raw.contact.and_then(|c| c.name).unwrap_or_default(),
        amount_minor: amount(&raw.total, &currency, "Total")?,
        currency,
        status,
        issue_date: iso_date(&raw.date_string)?,
        due_date: raw.due_date_string.as_deref().map(iso_date).transpose()?,
    }))
}
