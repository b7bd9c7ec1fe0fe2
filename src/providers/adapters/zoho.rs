//! Zoho Invoice: one data centre per deployment entry (its four URLs); an account that lives
//! in another data centre is refused with a message naming it, because its tokens only work
//! there. The organization is the default one from `GET /invoice/v3/organizations`. Invoices
//! from `GET /invoice/v3/invoices?organization_id=…`, `page`/`per_page`, `has_more_page`.

use crate::ids::AccountId;
use serde::Deserialize;

use super::http_json::{Auth, endpoint, get_json};
use super::{Api, CallbackHints, Page, admitted, amount, iso_date, page_number, unknown_status};
use crate::providers::invoice::{ApiError, Invoice, InvoiceStatus, StatusFilter};
use crate::providers::{Account, Provider};

#[derive(Deserialize)]
struct Organizations {
    organizations: Vec<Organization>,
}

#[derive(Deserialize)]
struct Organization {
    organization_id: AccountId,
    name: String,
    #[serde(default)]
    is_default_org: bool,
}

#[derive(Deserialize)]
struct List {
    invoices: Vec<ZohoInvoice>,
    page_context: PageContext,
}

#[derive(Deserialize)]
struct PageContext {
    page: u32,
    has_more_page: bool,
}

#[derive(Deserialize)]
struct ZohoInvoice {
    invoice_id: String,
    invoice_number: Option<String>,
    customer_name: Option<String>,
    status: String,
    date: String,
    due_date: Option<String>,
    total: serde_json::Value,
    currency_code: String,
}

/// Before the code is redeemed: an account in another data centre can only redeem its code
/// there, so it is refused by name rather than failing at the token endpoint.
pub(super) fn check_region(provider: &Provider, hints: &CallbackHints) -> Result<(), ApiError> {
    let Some(server) = &hints.accounts_server else {
        return Ok(());
    };
    let theirs = url::Url::parse(server).ok();
    let theirs = theirs.as_ref().and_then(|u| u.host_str());
    let ours = provider
        .oauth()
        .and_then(|oauth| oauth.token_url.host_str());
    if theirs != ours {
        return Err(ApiError::WrongRegion(format!(
            "this Zoho account lives at {}; this grantry is set up for {}",
            theirs.unwrap_or("another data centre"),
            ours.unwrap_or("another data centre"),
        )));
    }
    Ok(())
}

pub(super) async fn pick_account(api: &Api<'_>) -> Result<Account, ApiError> {
    let url = endpoint(&api.base()?, &["invoice", "v3", "organizations"])?;
    let answer: Organizations = get_json(api, url, Auth::Zoho, &[]).await?;
    let mut organizations = answer.organizations;
    let pick = organizations
        .iter()
        .position(|o| o.is_default_org)
        .unwrap_or(0);
    if organizations.is_empty() {
        return Err(ApiError::BadResponse(
            "the user has no Zoho Invoice organization".into(),
        ));
    }
    let org = organizations.swap_remove(pick);
    Ok(Account {
        id: org.organization_id,
        name: org.name,
    })
}

pub(super) async fn list_invoices(
    api: &Api<'_>,
    filter: StatusFilter,
    cursor: Option<&str>,
) -> Result<Page, ApiError> {
    let org = api.account()?;
    let page = page_number(cursor)?;
    let mut url = endpoint(&api.base()?, &["invoice", "v3", "invoices"])?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("organization_id", org.id.as_str())
            .append_pair("page", &page.to_string())
            .append_pair("per_page", "200");
        if filter == StatusFilter::Paid {
            query.append_pair("status", "paid");
        }
    }
    let list: List = get_json(api, url, Auth::Zoho, &[]).await?;
    let invoices = admitted(list.invoices, normalize, filter)?;
    Ok(Page {
        invoices,
        next_cursor: list
            .page_context
            .has_more_page
            .then(|| (list.page_context.page + 1).to_string()),
    })
}

fn normalize(raw: ZohoInvoice) -> Result<Option<Invoice>, ApiError> {
    let status = match raw.status.as_str() {
        "draft" => InvoiceStatus::Draft,
        "paid" => InvoiceStatus::Paid,
        "void" => InvoiceStatus::Void,
        "sent" | "viewed" | "unpaid" | "overdue" | "partially_paid" => InvoiceStatus::Open,
        other => return Ok(unknown_status("zoho", other)),
    };
    let currency = raw.currency_code.to_ascii_uppercase();
    Ok(Some(Invoice {
        number: raw.invoice_number.unwrap_or_else(|| raw.invoice_id.clone()),
        id: raw.invoice_id,
        customer: raw.customer_name.unwrap_or_default(),
        amount_minor: amount(&raw.total, &currency, "total")?,
        currency,
        status,
        issue_date: iso_date(&raw.date)?,
        due_date: raw
            .due_date
            .as_deref()
            .filter(|d| !d.is_empty())
            .map(iso_date)
            .transpose()?,
    }))
}
