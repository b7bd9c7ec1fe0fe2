//! What users did to their demo invoices: the ones they created (with the idempotency key
//! each came with) and the ones they voided. In memory: the demo is for trying grantry out
//! on one process; created invoices do not survive a restart.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use super::invoices::DemoInvoice;

#[derive(Default)]
pub(super) struct Book {
    users: Mutex<HashMap<String, UserBook>>,
    /// Seeded invoices already derived (eight SHA-256s per user), for the most recent users.
    seeded: Mutex<HashMap<String, Vec<DemoInvoice>>>,
}

/// Users whose seeded invoices are kept derived; past it they are derived on each read.
const SEEDED_KEPT: usize = 10_000;

#[derive(Default)]
struct UserBook {
    created: Vec<DemoInvoice>,
    by_idempotency_key: HashMap<String, String>,
    voided: HashSet<String>,
}

/// Why a void was refused.
pub(super) enum VoidError {
    NotFound,
    Paid,
}

impl Book {
    /// The user's invoices: seeded ones, then created ones, with voids applied.
    pub fn invoices(&self, user: &str) -> Vec<DemoInvoice> {
        let mut all = self.seeded(user);
        let users = self.users.lock().expect("demo book lock");
        if let Some(book) = users.get(user) {
            all.extend(book.created.iter().cloned());
            for invoice in &mut all {
                if book.voided.contains(&invoice.id) {
                    invoice.state = "void";
                }
            }
        }
        all
    }

    fn seeded(&self, user: &str) -> Vec<DemoInvoice> {
        let mut kept = self.seeded.lock().expect("demo seeded lock");
        if let Some(invoices) = kept.get(user) {
            return invoices.clone();
        }
        let invoices = super::invoices::seeded(user);
        if kept.len() < SEEDED_KEPT {
            kept.insert(user.to_owned(), invoices.clone());
        }
        invoices
    }

    /// Creates `invoice` for `user`, or returns the one already created under `key`.
    pub fn create(
        &self,
        user: &str,
        key: &str,
        make: impl FnOnce(usize) -> DemoInvoice,
    ) -> (DemoInvoice, bool) {
        let mut users = self.users.lock().expect("demo book lock");
        let book = users.entry(user.to_owned()).or_default();
        if let Some(id) = book.by_idempotency_key.get(key)
            && let Some(existing) = book.created.iter().find(|i| &i.id == id)
        {
            return (existing.clone(), false);
        }
        let invoice = make(book.created.len());
        book.by_idempotency_key
            .insert(key.to_owned(), invoice.id.clone());
        book.created.push(invoice.clone());
        (invoice, true)
    }

    /// Voids the user's invoice `id` (voiding twice is fine; a paid one cannot be voided).
    pub fn void(&self, user: &str, id: &str) -> Result<DemoInvoice, VoidError> {
        let current = self
            .invoices(user)
            .into_iter()
            .find(|i| i.id == id)
            .ok_or(VoidError::NotFound)?;
        if current.state == "paid" {
            return Err(VoidError::Paid);
        }
        let mut users = self.users.lock().expect("demo book lock");
        users
            .entry(user.to_owned())
            .or_default()
            .voided
            .insert(id.to_owned());
        Ok(DemoInvoice {
            state: "void",
            ..current
        })
    }
}
