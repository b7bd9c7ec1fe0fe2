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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InvoiceStatus {
    Open,
    Paid,
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
    #[error("the provider is unavailable: {0}")]
    Unavailable(String),
    #[error("the provider's answer was not understood: {0}")]
    BadResponse(String),
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
    fn amounts_format_with_two_decimals() {
        assert_eq!(format_amount(12000, "EUR"), "120.00 EUR");
        assert_eq!(format_amount(4550, "USD"), "45.50 USD");
        assert_eq!(format_amount(-5, "GBP"), "-0.05 GBP");
    }
}
