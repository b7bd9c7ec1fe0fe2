//! The demo billing API's seeded data: five invoices per user, derived from the user's name.
//!
//! Deterministic (a SHA-256 of the name), so the same user always sees the same invoices on
//! every replica and run, and different users see different numbers, customers and amounts.
//! The shape is the demo API's own, deliberately not grantry's normalized invoice: lower-case
//! currency, amounts in cents, `state` rather than `status`, so the adapter has mapping to do.

use serde::Serialize;
use sha2::{Digest, Sha256};

/// How many invoices each user has.
pub(super) const INVOICES_PER_USER: usize = 5;

const CUSTOMERS: [&str; 12] = [
    "Acme Robotics GmbH",
    "Blue Harbor Coffee",
    "Northwind Traders",
    "Globex Logistics",
    "Initech Software Ltd",
    "Umbrella Gardens",
    "Stark Bicycles",
    "Wayne Textiles",
    "Oceanic Air Charter",
    "Soylent Kitchens",
    "Hooli Analytics",
    "Vandelay Imports",
];

const CURRENCIES: [&str; 3] = ["eur", "usd", "gbp"];

/// One invoice as the demo API returns it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(super) struct DemoInvoice {
    pub(crate) id: String,
    pub(crate) number: String,
    pub(crate) customer_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) customer_email: Option<String>,
    pub(crate) total_cents: u64,
    pub(crate) currency: String,
    /// `open`, `paid` or `void`.
    pub(crate) state: &'static str,
    /// `YYYY-MM-DD`.
    pub(crate) created: String,
    /// `YYYY-MM-DD`.
    pub(crate) due: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
}

/// The invoices of `user`, newest first; at least one open and one paid.
pub(super) fn seeded(user: &str) -> Vec<DemoInvoice> {
    let seed: [u8; 32] = Sha256::new()
        .chain_update(b"grantry/demo/invoices/v1:")
        .chain_update(user.as_bytes())
        .finalize()
        .into();
    // Numbers run consecutively from a per-user base in 1000..9000, like a real ledger.
    let base = 1000 + u32::from(u16::from_be_bytes([seed[0], seed[1]])) % 8000;
    (0..INVOICES_PER_USER)
        .map(|i| {
            let h: [u8; 32] = Sha256::new()
                .chain_update(seed)
                .chain_update([i as u8])
                .finalize()
                .into();
            let state = match i {
                0 => "open",
                1 => "paid",
                _ if h[18].is_multiple_of(2) => "open",
                _ => "paid",
            };
            // Newest first: October back to June 2026; due a month later on the same day
            // (days stop at 28, so every month has them).
            let month = 10 - i as u32;
            let day = 1 + u32::from(h[19] % 28);
            let cents = 1_000 + u32::from_be_bytes([h[13], h[14], h[15], h[16]]) % 499_000;
            DemoInvoice {
                id: format!("in_{}", hex::encode(&h[..12])),
                number: format!("DEMO-{}", base + INVOICES_PER_USER as u32 - i as u32),
                customer_name: CUSTOMERS[usize::from(h[12]) % CUSTOMERS.len()].to_owned(),
                customer_email: None,
                total_cents: u64::from(cents),
                currency: CURRENCIES[usize::from(h[17]) % CURRENCIES.len()].to_owned(),
                state,
                created: format!("2026-{month:02}-{day:02}"),
                due: format!("2026-{:02}-{day:02}", month + 1),
                description: None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_user_same_invoices_other_user_other_invoices() {
        let alice = seeded("alice");
        assert_eq!(alice, seeded("alice"));
        assert_eq!(alice.len(), INVOICES_PER_USER);
        let bob = seeded("bob");
        assert_ne!(alice[0].number, bob[0].number);
        assert_ne!(alice[0].id, bob[0].id);
    }

    #[test]
    fn invoices_are_mixed_and_well_formed() {
        for user in ["demo-user", "alice", "bob@example.com"] {
            let invoices = seeded(user);
            assert!(invoices.iter().any(|i| i.state == "open"));
            assert!(invoices.iter().any(|i| i.state == "paid"));
            for inv in &invoices {
                assert!(
                    inv.id.starts_with("in_") && inv.id.len() == 27,
                    "{}",
                    inv.id
                );
                assert!(inv.number.starts_with("DEMO-"));
                assert!(CURRENCIES.contains(&inv.currency.as_str()));
                assert!((1_000..500_000).contains(&inv.total_cents));
                assert!(inv.created < inv.due, "{} !< {}", inv.created, inv.due);
            }
        }
    }
}
