//! The one normalized invoice schema every adapter maps its provider's API to.

use serde::{Deserialize, Serialize};

/// An invoice as `list_invoices` returns it, whatever the provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Invoice {
    /// The provider's id for the invoice.
    pub id: String,
    /// The number printed on the invoice.
    pub number: String,
    /// The customer's display name.
    pub customer: String,
    /// Total in the currency's minor unit (cents for EUR).
    pub amount_minor: i64,
    /// ISO 4217 code, upper case.
    pub currency: String,
    pub status: InvoiceStatus,
    /// `YYYY-MM-DD`.
    pub issue_date: String,
    /// `YYYY-MM-DD`, when the invoice has one.
    pub due_date: Option<String>,
}

/// Where an invoice stands, the same words for every provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InvoiceStatus {
    /// Not yet sent (never counts as open).
    Draft,
    /// Sent and not fully paid: unpaid, partly paid, overdue.
    Open,
    Paid,
    /// Cancelled.
    Void,
    /// Written off as never to be paid.
    Uncollectible,
}

impl StatusFilter {
    /// Whether an invoice with `status` belongs in this listing.
    pub fn admits(self, status: InvoiceStatus) -> bool {
        match self {
            StatusFilter::Open => status == InvoiceStatus::Open,
            StatusFilter::Paid => status == InvoiceStatus::Paid,
            StatusFilter::All => true,
        }
    }
}

/// Which invoices to list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusFilter {
    #[default]
    Open,
    Paid,
    All,
}

impl StatusFilter {
    pub fn as_str(self) -> &'static str {
        match self {
            StatusFilter::Open => "open",
            StatusFilter::Paid => "paid",
            StatusFilter::All => "all",
        }
    }
}

/// Why listing invoices at a provider failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The provider refused the access token (expired or revoked).
    #[error("the provider refused the access token")]
    Unauthorized,
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
    /// The caller's `cursor` is not one this adapter hands out.
    #[error("cursor is not one grantry gave out")]
    BadCursor,
}

/// Parses a decimal amount (`"120.5"`, `120.50`, `-3`) into minor units, exactly: no float
/// arithmetic. Two decimals, as every adapter's currencies have; more digits are refused
/// rather than rounded.
pub fn minor_units(value: &serde_json::Value) -> Option<i64> {
    let text = match value {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => s.trim().to_owned(),
        _ => return None,
    };
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let fraction = fraction.trim_end_matches('0');
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || fraction.len() > 2 || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let cents = format!("{fraction:0<2}").parse::<i64>().ok()?;
    let minor = whole
        .parse::<i64>()
        .ok()?
        .checked_mul(100)?
        .checked_add(cents)?;
    Some(if negative { -minor } else { minor })
}

/// Formats an amount in minor units as `120.00 EUR` (two decimals; enough for the currencies
/// the adapters see today).
pub fn format_amount(amount_minor: i64, currency: &str) -> String {
    let sign = if amount_minor < 0 { "-" } else { "" };
    let abs = amount_minor.unsigned_abs();
    format!("{sign}{}.{:02} {currency}", abs / 100, abs % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_amounts_become_exact_minor_units() {
        use serde_json::json;
        assert_eq!(minor_units(&json!("120.5")), Some(12050));
        assert_eq!(minor_units(&json!(120.50)), Some(12050));
        assert_eq!(minor_units(&json!(0.1)), Some(10));
        assert_eq!(minor_units(&json!("-3")), Some(-300));
        assert_eq!(minor_units(&json!("1999.99")), Some(199999));
        assert_eq!(minor_units(&json!("1.005")), None, "never rounded");
        assert_eq!(minor_units(&json!("abc")), None);
        assert_eq!(minor_units(&json!(null)), None);
    }

    #[test]
    fn amounts_format_with_two_decimals() {
        assert_eq!(format_amount(12000, "EUR"), "120.00 EUR");
        assert_eq!(format_amount(4550, "USD"), "45.50 USD");
        assert_eq!(format_amount(-5, "GBP"), "-0.05 GBP");
    }
}
