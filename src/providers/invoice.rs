//! The one normalized invoice schema every adapter maps its provider's API to.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An invoice as `list_invoices` returns it, whatever the provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub(crate) struct Invoice {
    /// The provider's id for the invoice.
    pub(crate) id: String,
    /// The number printed on the invoice.
    pub(crate) number: String,
    /// The customer's display name.
    pub(crate) customer: String,
    /// Total in the currency's minor unit (cents for EUR).
    pub(crate) amount_minor: i64,
    /// ISO 4217 code, upper case.
    pub(crate) currency: String,
    pub(crate) status: InvoiceStatus,
    /// `YYYY-MM-DD`.
    #[schemars(extend("format" = "date"))]
    pub(crate) issue_date: String,
    /// `YYYY-MM-DD`, when the invoice has one.
    #[schemars(extend("format" = "date"))]
    pub(crate) due_date: Option<String>,
}

impl Invoice {
    /// How a person recognizes it: "DEMO-N0001 for Acme GmbH (120.50 EUR)".
    pub(crate) fn summary(&self) -> String {
        format!(
            "{} for {} ({} {})",
            self.number,
            self.customer,
            decimal(self.amount_minor, &self.currency),
            self.currency
        )
    }
}

/// Where an invoice stands, the same words for every provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum InvoiceStatus {
    /// Not yet sent (never counts as open).
    Draft,
    /// Sent and not fully paid: unpaid, partly paid, overdue.
    Open,
    /// Paid in full.
    Paid,
    /// Cancelled.
    Void,
    /// Written off as never to be paid.
    Uncollectible,
}

impl StatusFilter {
    /// Whether an invoice with `status` belongs in this listing.
    pub(crate) fn admits(self, status: InvoiceStatus) -> bool {
        match self {
            StatusFilter::Open => status == InvoiceStatus::Open,
            StatusFilter::Paid => status == InvoiceStatus::Paid,
            StatusFilter::All => true,
        }
    }
}

/// An invoice to create, already validated (see `tools::invoice_draft`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NewInvoice {
    pub(crate) customer_email: String,
    pub(crate) customer_name: String,
    /// In the currency's minor unit.
    pub(crate) amount_minor: i64,
    /// ISO 4217, upper case.
    pub(crate) currency: String,
    /// `YYYY-MM-DD`.
    pub(crate) due_date: String,
    pub(crate) description: Option<String>,
}

/// `amount_minor` of `currency` as a decimal string (`12050` EUR → `"120.50"`).
pub(crate) fn decimal(amount_minor: i64, currency: &str) -> String {
    let exponent = currency_exponent(currency);
    if exponent == 0 {
        return amount_minor.to_string();
    }
    let scale = 10u64.pow(exponent);
    let sign = if amount_minor < 0 { "-" } else { "" };
    let abs = amount_minor.unsigned_abs();
    format!(
        "{sign}{}.{:0width$}",
        abs / scale,
        abs % scale,
        width = exponent as usize
    )
}

/// Which invoices to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StatusFilter {
    #[default]
    Open,
    Paid,
    All,
}

impl StatusFilter {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            StatusFilter::Open => "open",
            StatusFilter::Paid => "paid",
            StatusFilter::All => "all",
        }
    }
}

/// Why listing invoices at a provider failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ApiError {
    /// The provider refused the access token (expired or revoked).
    #[error("the provider refused the access token")]
    Unauthorized,
    /// The token works but reaches nothing here any more (a disconnected tenant, a scope).
    #[error("the provider refused access to this account")]
    Forbidden,
    /// The provider asked to slow down (429) or failed (5xx) even after bounded retries.
    #[error("the provider is busy or failing (HTTP {status}); retry in {retry_after_secs} s")]
    Busy { status: u16, retry_after_secs: u64 },
    #[error("the provider is unavailable: {0}")]
    Unavailable(String),
    #[error("the provider's answer was not understood: {0}")]
    BadResponse(String),
    /// The account lives where this deployment's entry does not reach (a Zoho data centre).
    #[error("{0}")]
    WrongRegion(String),
    /// No such invoice (or not one this account can see).
    #[error("no such invoice")]
    NotFound,
    /// The provider refused the change (an invoice already paid cannot be voided, say).
    #[error("the provider refused the request (HTTP {0})")]
    Rejected(u16),
    /// The adapter cannot do this at this provider (yet).
    #[error("not supported for this provider")]
    Unsupported,
    /// The caller's `cursor` is not one this adapter hands out.
    #[error("cursor is not one grantry gave out")]
    BadCursor,
}

/// Digits after the decimal point in `currency` (ISO 4217): 0 for the yen and its kind, 3
/// for the dinars, 2 for the rest.
pub(crate) fn currency_exponent(currency: &str) -> u32 {
    match currency.to_ascii_uppercase().as_str() {
        "BIF" | "CLP" | "DJF" | "GNF" | "ISK" | "JPY" | "KMF" | "KRW" | "PYG" | "RWF" | "UGX"
        | "UYI" | "VND" | "VUV" | "XAF" | "XOF" | "XPF" => 0,
        "BHD" | "IQD" | "JOD" | "KWD" | "LYD" | "OMR" | "TND" => 3,
        _ => 2,
    }
}

/// Parses a decimal amount in `currency` (`"120.5"`, `120.50`, `-3`) into its minor units,
/// exactly: no float arithmetic. More fraction digits than the currency has are refused
/// rather than rounded.
pub(crate) fn minor_units(value: &serde_json::Value, currency: &str) -> Option<i64> {
    let text = match value {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => s.trim().to_owned(),
        _ => return None,
    };
    let exponent = currency_exponent(currency);
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let fraction = fraction.trim_end_matches('0');
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    let too_precise = fraction.len() > exponent as usize;
    if whole.is_empty() || too_precise || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let scale = 10i64.pow(exponent);
    let padded = format!("{fraction:0<width$}", width = exponent as usize);
    let fraction_units = if exponent == 0 {
        0
    } else {
        padded.parse::<i64>().ok()?
    };
    let minor = whole
        .parse::<i64>()
        .ok()?
        .checked_mul(scale)?
        .checked_add(fraction_units)?;
    Some(if negative { -minor } else { minor })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_amounts_become_exact_minor_units() {
        use serde_json::json;
        assert_eq!(minor_units(&json!("120.5"), "EUR"), Some(12050));
        assert_eq!(minor_units(&json!(120.50), "usd"), Some(12050));
        assert_eq!(minor_units(&json!(0.1), "GBP"), Some(10));
        assert_eq!(minor_units(&json!("-3"), "EUR"), Some(-300));
        assert_eq!(minor_units(&json!("1999.99"), "EUR"), Some(199999));
        assert_eq!(minor_units(&json!("1.005"), "EUR"), None, "never rounded");
        assert_eq!(minor_units(&json!("abc"), "EUR"), None);
        assert_eq!(minor_units(&json!(null), "EUR"), None);
        assert_eq!(
            minor_units(&json!(1000), "JPY"),
            Some(1000),
            "no minor unit"
        );
        assert_eq!(minor_units(&json!("1000.5"), "JPY"), None);
        assert_eq!(
            minor_units(&json!("12.345"), "KWD"),
            Some(12345),
            "three decimals"
        );
    }
}
