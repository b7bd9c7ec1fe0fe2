//! Xero: the tenant comes from `GET /connections` after connect, filtered by the sign-in's
//! `authEventId` (from the access token) so a second sign-in picks the organisation the person
//! chose then; of what is listed, the first organisation is used and named. Invoices: sales invoices
//! (`Type=="ACCREC"`) from `GET /api.xro/2.0/Invoices` with the `xero-tenant-id` header,
//! 100 per `page`; statuses DRAFT/SUBMITTED, AUTHORISED, PAID, VOIDED, DELETED.

use crate::ids::AccountId;
use serde::Deserialize;

use reqwest::Method;

use super::http_json::{Auth, JsonRequest, endpoint, get_json, send_for_status, send_json};
use super::{Api, Page, amount, iso_date, page_number, unknown_status};
use crate::providers::Account;
use crate::providers::invoice::{
    ApiError, Invoice, InvoiceStatus, NewInvoice, StatusFilter, decimal,
};

const PAGE_SIZE: usize = 100;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    id: String,
    tenant_id: AccountId,
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

pub(super) async fn pick_account(api: &Api<'_>) -> Result<Account, ApiError> {
    let mut url = endpoint(&api.base()?, &["connections"])?;
    if let Some(event) = auth_event_id(api.access_token) {
        url.query_pairs_mut().append_pair("authEventId", &event);
    }
    let connections: Vec<Connection> = get_json(api, url, Auth::Bearer, &[]).await?;
    connections
        .into_iter()
        .find(|c| c.tenant_type == "ORGANISATION")
        .map(|c| Account {
            name: c.tenant_name.unwrap_or_else(|| c.tenant_id.to_string()),
            id: c.tenant_id,
        })
        .ok_or_else(|| ApiError::BadResponse("the grant reaches no Xero organisation".into()))
}

/// Ends this grant's organisation alone (`DELETE /connections/{id}`): Xero's token revocation
/// would end every organisation the person connected to the app. Already gone is done.
pub(super) async fn disconnect_organisation(api: &Api<'_>) -> Result<(), ApiError> {
    let tenant = api.account()?;
    let url = endpoint(&api.base()?, &["connections"])?;
    let connections: Vec<Connection> = get_json(api, url, Auth::Bearer, &[]).await?;
    let Some(connection) = connections.into_iter().find(|c| c.tenant_id == tenant.id) else {
        return Ok(());
    };
    let url = endpoint(&api.base()?, &["connections", &connection.id])?;
    send_for_status(api, &JsonRequest::new(Method::DELETE, url)).await
}

pub(super) async fn list_invoices(
    api: &Api<'_>,
    filter: StatusFilter,
    cursor: Option<&str>,
) -> Result<Page, ApiError> {
    let tenant = api.account()?;
    let page = page_number(cursor)?;
    let mut url = endpoint(&api.base()?, &["api.xro", "2.0", "Invoices"])?;
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
    let list: Invoices = get_json(
        api,
        url,
        Auth::Bearer,
        &[("xero-tenant-id", tenant.id.as_str())],
    )
    .await?;
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

pub(super) async fn create_invoice(
    api: &Api<'_>,
    new: &NewInvoice,
    idempotency_key: &str,
) -> Result<Invoice, ApiError> {
    let tenant = api.account()?;
    let url = endpoint(&api.base()?, &["api.xro", "2.0", "Invoices"])?;
    let unit_amount: serde_json::Value =
        serde_json::from_str(&decimal(new.amount_minor, &new.currency))
            .map_err(|_| ApiError::BadResponse("amount".into()))?;
    let body = serde_json::json!({"Invoices": [{
        "Type": "ACCREC",
        "Contact": {"Name": new.customer_name, "EmailAddress": new.customer_email},
        "DueDate": new.due_date,
        "CurrencyCode": new.currency,
        "LineAmountTypes": "NoTax",
        "LineItems": [{
            "Description": new.description.clone().unwrap_or_else(|| "Invoice".into()),
            "Quantity": 1,
            "UnitAmount": unit_amount,
        }],
        "Status": "AUTHORISED",
    }]});
    let headers = [
        ("xero-tenant-id", tenant.id.as_str()),
        ("Idempotency-Key", idempotency_key),
    ];
    one(send_json(
        api,
        &JsonRequest {
            headers: &headers,
            body: Some(&body),
            ..JsonRequest::new(Method::POST, url)
        },
    )
    .await?)
}

pub(super) async fn get_invoice(api: &Api<'_>, id: &str) -> Result<Invoice, ApiError> {
    let tenant = api.account()?;
    let url = endpoint(&api.base()?, &["api.xro", "2.0", "Invoices", id])?;
    one(get_json(
        api,
        url,
        Auth::Bearer,
        &[("xero-tenant-id", tenant.id.as_str())],
    )
    .await?)
}

/// Xero voids by updating the invoice's status to VOIDED.
pub(super) async fn void_invoice(api: &Api<'_>, id: &str) -> Result<Invoice, ApiError> {
    let tenant = api.account()?;
    let url = endpoint(&api.base()?, &["api.xro", "2.0", "Invoices", id])?;
    let body = serde_json::json!({"Invoices": [{"InvoiceID": id, "Status": "VOIDED"}]});
    let headers = [("xero-tenant-id", tenant.id.as_str())];
    one(send_json(
        api,
        &JsonRequest {
            headers: &headers,
            body: Some(&body),
            ..JsonRequest::new(Method::POST, url)
        },
    )
    .await?)
}

/// The one invoice of a create, get or update answer.
fn one(answer: Invoices) -> Result<Invoice, ApiError> {
    let raw = answer
        .invoices
        .into_iter()
        .next()
        .ok_or_else(|| ApiError::BadResponse("no invoice in the answer".into()))?;
    normalize(raw)?.ok_or(ApiError::NotFound)
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

/// The `authentication_event_id` claim of Xero's access token (a JWT), which names the sign-in
/// it came from. Read, not verified: it only narrows which organisations `GET /connections`
/// lists, and that answer is Xero's, over TLS, for this very token.
fn auth_event_id(access_token: &str) -> Option<String> {
    use base64::Engine as _;
    let payload = access_token.split('.').nth(1)?;
    let json = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&json).ok()?;
    claims["authentication_event_id"]
        .as_str()
        .filter(|e| !e.is_empty() && e.len() <= 128)
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::auth_event_id;

    #[test]
    fn the_sign_in_event_is_read_from_a_jwt_access_token_only() {
        // {"authentication_event_id":"ae-42"}
        let token = "eyJhbGciOiJSUzI1NiJ9.eyJhdXRoZW50aWNhdGlvbl9ldmVudF9pZCI6ImFlLTQyIn0.sig";
        assert_eq!(auth_event_id(token).as_deref(), Some("ae-42"));
        assert_eq!(auth_event_id("an-opaque-token"), None);
        assert_eq!(auth_event_id("a.not-base64!.c"), None);
    }
}
