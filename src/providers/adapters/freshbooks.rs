//! FreshBooks: the business comes from `GET /auth/api/v1/users/me` (its `account_id`; a user
//! may belong to several businesses, the first is used and named). Invoices from
//! `/accounting/account/{account_id}/invoices/invoices`, `page`/`pages`, 100 per page;
//! status from `v3_status` and `payment_status`.

use crate::ids::AccountId;
use serde::Deserialize;

use super::http_json::{Auth, endpoint, get_json};
use super::{Api, Page, admitted, amount, iso_date, page_number};
use crate::providers::Account;
use crate::providers::invoice::{ApiError, Invoice, InvoiceStatus, StatusFilter};

#[derive(Deserialize)]
struct Me {
    response: MeResponse,
}

#[derive(Deserialize)]
struct MeResponse {
    #[serde(default)]
    business_memberships: Vec<Membership>,
}

#[derive(Deserialize)]
struct Membership {
    business: Business,
}

#[derive(Deserialize)]
struct Business {
    name: String,
    account_id: Option<AccountId>,
}

#[derive(Deserialize)]
struct List {
    response: ListResponse,
}

#[derive(Deserialize)]
struct ListResponse {
    result: ListResult,
}

#[derive(Deserialize)]
struct ListResult {
    invoices: Vec<FbInvoice>,
    page: u32,
    pages: u32,
}

#[derive(Deserialize)]
struct FbInvoice {
    id: serde_json::Value,
    invoice_number: Option<String>,
    organization: Option<String>,
    amount: Money,
    payment_status: String,
    v3_status: Option<String>,
    create_date: String,
    due_date: Option<String>,
}

#[derive(Deserialize)]
struct Money {
    amount: serde_json::Value,
    code: String,
}

pub(super) async fn pick_account(api: &Api<'_>) -> Result<Account, ApiError> {
    let url = endpoint(&api.base()?, &["auth", "api", "v1", "users", "me"])?;
    let me: Me = get_json(api, url, Auth::Bearer, &[]).await?;
    me.response
        .business_memberships
        .into_iter()
        .find_map(|m| {
            m.business.account_id.map(|id| Account {
                id,
                name: m.business.name,
            })
        })
        .ok_or_else(|| ApiError::BadResponse("the user belongs to no FreshBooks business".into()))
}

pub(super) async fn list_invoices(
    api: &Api<'_>,
    filter: StatusFilter,
    cursor: Option<&str>,
) -> Result<Page, ApiError> {
    let business = api.account()?;
    let page = page_number(cursor)?;
    let mut url = endpoint(
        &api.base()?,
        &[
            "accounting",
            "account",
            business.id.as_str(),
            "invoices",
            "invoices",
        ],
    )?;
    url.query_pairs_mut()
        .append_pair("page", &page.to_string())
        .append_pair("per_page", "100");
    let list: List = get_json(api, url, Auth::Bearer, &[]).await?;
    let result = list.response.result;
    let invoices = admitted(result.invoices, normalize, filter)?;
    Ok(Page {
        invoices,
        next_cursor: (result.page < result.pages).then(|| (result.page + 1).to_string()),
    })
}

fn normalize(raw: FbInvoice) -> Result<Option<Invoice>, ApiError> {
    let id = match raw.id {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => s,
        other => return Err(ApiError::BadResponse(format!("invoice id `{other}`"))),
    };
    let status = match (raw.v3_status.as_deref(), raw.payment_status.as_str()) {
        (Some("draft"), _) => InvoiceStatus::Draft,
        (_, "paid" | "overpaid" | "auto-paid") => InvoiceStatus::Paid,
        _ => InvoiceStatus::Open,
    };
    let currency = raw.amount.code.to_ascii_uppercase();
    Ok(Some(Invoice {
        number: raw.invoice_number.unwrap_or_else(|| id.clone()),
        id,
        customer: raw.organization.unwrap_or_default(),
        amount_minor: amount(&raw.amount.amount, &currency, "amount")?,
        currency,
        status,
        issue_date: iso_date(&raw.create_date)?,
        due_date: raw.due_date.as_deref().map(iso_date).transpose()?,
    }))
}
