//! QuickBooks Online: the company is the `realmId` on the redirect back, named from
//! `companyinfo`. Invoices come from the query endpoint (`select * from Invoice …
//! STARTPOSITION n MAXRESULTS m`); an invoice with a balance is open, one without is paid,
//! and one whose total is zero is void (voiding zeroes an invoice's amounts).

use crate::ids::AccountId;
use serde::Deserialize;

use super::http_json::{Auth, endpoint, get_json};
use super::{Api, CallbackHints, Page, admitted, amount, iso_date};
use crate::providers::Account;
use crate::providers::invoice::{ApiError, Invoice, InvoiceStatus, StatusFilter};

const PAGE_SIZE: u32 = 100;
const MINOR_VERSION: &str = "75";

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CompanyInfoAnswer {
    company_info: CompanyInfo,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct CompanyInfo {
    company_name: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QueryAnswer {
    query_response: QueryResponse,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QueryResponse {
    #[serde(default)]
    invoice: Vec<QboInvoice>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct QboInvoice {
    id: String,
    doc_number: Option<String>,
    customer_ref: Option<Reference>,
    total_amt: serde_json::Value,
    balance: serde_json::Value,
    currency_ref: Option<Reference>,
    txn_date: String,
    due_date: Option<String>,
}

#[derive(Deserialize)]
struct Reference {
    value: String,
    name: Option<String>,
}

pub(super) async fn pick_account(
    api: &Api<'_>,
    hints: &CallbackHints,
) -> Result<Account, ApiError> {
    let realm = hints
        .realm_id
        .as_deref()
        .filter(|r| !r.is_empty() && r.len() <= 32 && r.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| ApiError::BadResponse("the redirect carried no company (realmId)".into()))?;
    let mut url = endpoint(
        &api.base()?,
        &["v3", "company", realm, "companyinfo", realm],
    )?;
    url.query_pairs_mut()
        .append_pair("minorversion", MINOR_VERSION);
    let info: CompanyInfoAnswer = get_json(api, url, Auth::Bearer, &[]).await?;
    let id = AccountId::given(realm)
        .ok_or_else(|| ApiError::BadResponse("the redirect carried an empty realmId".into()))?;
    Ok(Account {
        id,
        name: info.company_info.company_name,
    })
}

pub(super) async fn list_invoices(
    api: &Api<'_>,
    filter: StatusFilter,
    cursor: Option<&str>,
) -> Result<Page, ApiError> {
    let company = api.account()?;
    let start: u32 = match cursor {
        None => 1,
        Some(text) => text
            .parse()
            .ok()
            .filter(|n| *n > 1)
            .ok_or(ApiError::BadCursor)?,
    };
    let condition = match filter {
        StatusFilter::Open => " where Balance > '0'",
        StatusFilter::Paid => " where Balance = '0'",
        StatusFilter::All => "",
    };
    let query = format!(
        "select * from Invoice{condition} ORDERBY Id STARTPOSITION {start} MAXRESULTS {PAGE_SIZE}"
    );
    let mut url = endpoint(
        &api.base()?,
        &["v3", "company", company.id.as_str(), "query"],
    )?;
    url.query_pairs_mut()
        .append_pair("query", &query)
        .append_pair("minorversion", MINOR_VERSION);
    let answer: QueryAnswer = get_json(api, url, Auth::Bearer, &[]).await?;
    let rows = answer.query_response.invoice;
    let full = rows.len() as u32 >= PAGE_SIZE;
    let invoices = admitted(rows, normalize, filter)?;
    Ok(Page {
        invoices,
        next_cursor: full.then(|| (start + PAGE_SIZE).to_string()),
    })
}

fn normalize(raw: QboInvoice) -> Result<Option<Invoice>, ApiError> {
    let currency = raw
        .currency_ref
        .as_ref()
        .map(|c| c.value.to_ascii_uppercase())
        .unwrap_or_else(|| "USD".into());
    let balance = amount(&raw.balance, &currency, "Balance")?;
    let total = amount(&raw.total_amt, &currency, "TotalAmt")?;
    let status = if balance > 0 {
        InvoiceStatus::Open
    } else if total == 0 {
        InvoiceStatus::Void
    } else {
        InvoiceStatus::Paid
    };
    Ok(Some(Invoice {
        number: raw.doc_number.unwrap_or_else(|| raw.id.clone()),
        id: raw.id,
        customer: raw
            .customer_ref
            .map(|c| c.name.unwrap_or(c.value))
            .unwrap_or_default(),
        amount_minor: total,
        currency,
        status,
        issue_date: iso_date(&raw.txn_date)?,
        due_date: raw.due_date.as_deref().map(iso_date).transpose()?,
    }))
}
