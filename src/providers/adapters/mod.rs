//! One invoice adapter per billing API: each maps its provider's invoices (status filters,
//! pagination, amounts and currencies, dates) to the one [`Invoice`] schema, and picks the
//! account a new grant is used with (the post-connect step).

mod chargebee;
mod demo;
mod freshbooks;
mod http_json;
mod paddle;
mod quickbooks;
mod sage;
mod stripe;
mod xero;
mod zoho;

use super::catalog::{AdapterKind, ApiBase, SiteName};
use super::invoice::{ApiError, Invoice, NewInvoice, StatusFilter};
use super::{Account, Provider};

/// One authenticated conversation with a provider's API.
pub(crate) struct Api<'a> {
    pub(crate) upstream: &'a super::upstream::Upstream,
    pub(crate) provider: &'a Provider,
    pub(crate) access_token: &'a str,
    pub(crate) account: Option<&'a Account>,
}

impl Api<'_> {
    /// Where the provider's API is for this call (a per-site API: at the account's site).
    fn base(&self) -> Result<url::Url, ApiError> {
        match &self.provider.api_base {
            ApiBase::Fixed(url) => Ok(url.clone()),
            ApiBase::PerSite(template) => SiteName::parse(self.account()?.id.as_str())
                .and_then(|site| template.url_for(&site))
                .ok_or_else(|| ApiError::BadResponse("the account's site makes no URL".into())),
        }
    }

    /// The account the grant was connected with; adapters that need one fail without it.
    fn account(&self) -> Result<&Account, ApiError> {
        self.account.ok_or_else(|| {
            ApiError::BadResponse(
                "this connection has no account selected; connect it again".into(),
            )
        })
    }
}

/// One page of invoices, and where the next one starts.
#[derive(Debug, Default)]
pub(crate) struct Page {
    pub(crate) invoices: Vec<Invoice>,
    /// Opaque to the caller; `None` on the last page.
    pub(crate) next_cursor: Option<String>,
}

/// What the provider's redirect back told about the account (QuickBooks' `realmId`, Zoho's
/// `accounts-server`).
#[derive(Debug, Default, Clone)]
pub(crate) struct CallbackHints {
    pub(crate) realm_id: Option<String>,
    pub(crate) accounts_server: Option<String>,
}

/// Lists one page of invoices.
pub(crate) async fn list_invoices(
    api: &Api<'_>,
    filter: StatusFilter,
    cursor: Option<&str>,
) -> Result<Page, ApiError> {
    match api.provider.adapter {
        AdapterKind::Demo => demo::list_invoices(api, filter, cursor).await,
        AdapterKind::Stripe => stripe::list_invoices(api, filter, cursor).await,
        AdapterKind::Xero => xero::list_invoices(api, filter, cursor).await,
        AdapterKind::Quickbooks => quickbooks::list_invoices(api, filter, cursor).await,
        AdapterKind::Freshbooks => freshbooks::list_invoices(api, filter, cursor).await,
        AdapterKind::Zoho => zoho::list_invoices(api, filter, cursor).await,
        AdapterKind::Sage => sage::list_invoices(api, filter, cursor).await,
        AdapterKind::Paddle => paddle::list_invoices(api, filter, cursor).await,
        AdapterKind::Chargebee => chargebee::list_invoices(api, filter, cursor).await,
    }
}

/// One cheap call with a key a person typed, before it is stored: `Unauthorized` or
/// `Forbidden` means the provider refused it (or it cannot read invoices).
pub(crate) async fn check_key(api: &Api<'_>) -> Result<(), ApiError> {
    match api.provider.adapter {
        AdapterKind::Paddle => paddle::check_key(api).await,
        AdapterKind::Chargebee => chargebee::check_key(api).await,
        _ => Err(ApiError::Unsupported),
    }
}

/// Creates an invoice; a repeated `idempotency_key` returns the one created the first time.
pub(crate) async fn create_invoice(
    api: &Api<'_>,
    new: &NewInvoice,
    idempotency_key: &str,
) -> Result<Invoice, ApiError> {
    match api.provider.adapter {
        AdapterKind::Demo => demo::create_invoice(api, new, idempotency_key).await,
        AdapterKind::Xero => xero::create_invoice(api, new, idempotency_key).await,
        _ => Err(ApiError::Unsupported),
    }
}

/// One invoice by its provider id.
pub(crate) async fn get_invoice(api: &Api<'_>, id: &str) -> Result<Invoice, ApiError> {
    match api.provider.adapter {
        AdapterKind::Demo => demo::get_invoice(api, id).await,
        AdapterKind::Xero => xero::get_invoice(api, id).await,
        _ => Err(ApiError::Unsupported),
    }
}

/// Voids an invoice.
pub(crate) async fn void_invoice(api: &Api<'_>, id: &str) -> Result<Invoice, ApiError> {
    match api.provider.adapter {
        AdapterKind::Demo => demo::void_invoice(api, id).await,
        AdapterKind::Xero => xero::void_invoice(api, id).await,
        _ => Err(ApiError::Unsupported),
    }
}

/// The post-connect step: which account (tenant, company, business, organization; the
/// demo's user) the new grant is used with. `None` for providers whose token is the account
/// (Stripe).
pub(crate) async fn pick_account(
    api: &Api<'_>,
    hints: &CallbackHints,
) -> Result<Option<Account>, ApiError> {
    match api.provider.adapter {
        AdapterKind::Stripe | AdapterKind::Paddle => Ok(None),
        // The site the person typed beside the key.
        AdapterKind::Chargebee => Ok(api.account.cloned()),
        AdapterKind::Demo => demo::pick_account(api).await.map(Some),
        AdapterKind::Xero => xero::pick_account(api).await.map(Some),
        AdapterKind::Quickbooks => quickbooks::pick_account(api, hints).await.map(Some),
        AdapterKind::Freshbooks => freshbooks::pick_account(api).await.map(Some),
        AdapterKind::Zoho => zoho::pick_account(api).await.map(Some),
        AdapterKind::Sage => sage::pick_account(api).await.map(Some),
    }
}

/// Ends one grant's account alone at a provider whose token revocation would end all of the
/// person's accounts there (Xero); `None` where revoking the token ends this grant only.
pub(crate) async fn disconnect_account(api: &Api<'_>) -> Option<Result<(), ApiError>> {
    match api.provider.adapter {
        AdapterKind::Xero => Some(xero::disconnect_organisation(api).await),
        _ => None,
    }
}

/// Where [`disconnect_account`] asks (Xero's connections API), for saying which URL failed.
pub(crate) fn disconnect_account_url(api: &Api<'_>) -> Option<url::Url> {
    match api.provider.adapter {
        AdapterKind::Xero => http_json::endpoint(&api.base().ok()?, &["connections"]).ok(),
        _ => None,
    }
}

/// Normalizes a page of raw invoices and keeps those `filter` admits (for providers whose
/// API cannot filter by our statuses itself).
/// `normalize` gives `None` for an invoice it cannot place (a status grantry does not know):
/// that one is left out and logged, rather than failing the whole page.
fn admitted<T>(
    rows: Vec<T>,
    normalize: impl Fn(T) -> Result<Option<Invoice>, ApiError>,
    filter: StatusFilter,
) -> Result<Vec<Invoice>, ApiError> {
    let mut invoices = Vec::new();
    for raw in rows {
        if let Some(invoice) = normalize(raw)?
            && filter.admits(invoice.status)
        {
            invoices.push(invoice);
        }
    }
    Ok(invoices)
}

/// Logs an invoice left out for an unknown status (the status word is not personal data);
/// `api`: the billing API that sent it.
fn unknown_status(api: &str, status: &str) -> Option<Invoice> {
    tracing::warn!(api, status, "invoice with an unknown status left out");
    None
}

/// What the redirect back says that must be checked before the code is redeemed.
pub(crate) fn check_callback(provider: &Provider, hints: &CallbackHints) -> Result<(), ApiError> {
    match provider.adapter {
        AdapterKind::Zoho => zoho::check_region(provider, hints),
        _ => Ok(()),
    }
}

/// A page number cursor: `None` for the first page.
fn page_number(cursor: Option<&str>) -> Result<u32, ApiError> {
    match cursor {
        None => Ok(1),
        Some(text) => text
            .parse::<u32>()
            .ok()
            .filter(|n| (2..=100_000).contains(n))
            .ok_or(ApiError::BadCursor),
    }
}

/// `YYYY-MM-DD` of a unix time in seconds (UTC).
fn unix_date(seconds: i64) -> Result<String, ApiError> {
    time::OffsetDateTime::from_unix_timestamp(seconds)
        .map(|t| t.date().to_string())
        .map_err(|_| ApiError::BadResponse(format!("time `{seconds}`")))
}

/// `YYYY-MM-DD` from the first ten characters of an ISO date or date-time.
fn iso_date(text: &str) -> Result<String, ApiError> {
    let date = text.get(..10).unwrap_or_default();
    let ok = date.len() == 10
        && date.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if ok {
        Ok(date.to_owned())
    } else {
        Err(ApiError::BadResponse(format!("`{text}` is not a date")))
    }
}

fn amount(value: &serde_json::Value, currency: &str, what: &str) -> Result<i64, ApiError> {
    super::invoice::minor_units(value, currency)
        .ok_or_else(|| ApiError::BadResponse(format!("{what} is not an amount in {currency}")))
}
