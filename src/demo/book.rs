//! What users did to their demo invoices: the ones they created (with the idempotency key
//! each came with) and the ones they voided. In memory: the demo is for trying grantry out
//! on one process; created invoices do not survive a restart.
//!
//! Anyone can sign in to the demo under any name, so everything here is bounded: a user keeps
//! their newest [`MAX_CREATED_PER_USER`] created invoices, all users together the newest
//! [`MAX_CREATED`], and the book remembers the [`MAX_USERS`] users who wrote most recently;
//! past a bound the oldest goes.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Mutex;

use super::invoices::DemoInvoice;

/// Created invoices one user keeps; past it their oldest is dropped.
pub(super) const MAX_CREATED_PER_USER: usize = 50;
/// Created invoices kept in all; past it the oldest of anyone's is dropped.
pub(super) const MAX_CREATED: usize = 5_000;
/// Users whose writes are remembered; past it the one who wrote least recently is forgotten.
pub(super) const MAX_USERS: usize = 1_000;
/// Users whose seeded invoices are kept derived; past it they are derived on each read.
const SEEDED_KEPT: usize = 1_024;

#[derive(Default)]
pub(super) struct Book {
    ledger: Mutex<Ledger>,
    /// Seeded invoices already derived (eight SHA-256s per user), for the most recent users.
    seeded: Mutex<HashMap<String, Vec<DemoInvoice>>>,
}

#[derive(Default)]
struct Ledger {
    users: HashMap<String, UserBook>,
    /// Every created invoice kept, by creation number: the oldest first.
    created: BTreeMap<u64, (String, String)>,
    /// The next creation (and write) number.
    next: u64,
}

#[derive(Default)]
struct UserBook {
    /// The user's created invoices, oldest first, each with its creation number.
    created: VecDeque<(u64, DemoInvoice)>,
    /// Idempotency key → invoice id, for the invoices still kept.
    by_idempotency_key: HashMap<String, String>,
    voided: HashSet<String>,
    /// How many invoices the user created (their invoice numbers count on from it).
    made: u64,
    /// The number of the user's last write.
    touched: u64,
}

/// Why a void was refused.
pub(super) enum VoidError {
    NotFound,
    Paid,
}

impl Book {
    /// The user's invoices: seeded ones, then created ones, with voids applied.
    pub(super) fn invoices(&self, user: &str) -> Vec<DemoInvoice> {
        let mut all = self.seeded(user);
        let ledger = self.ledger.lock().expect("demo book lock");
        if let Some(book) = ledger.users.get(user) {
            all.extend(book.created.iter().map(|(_, invoice)| invoice.clone()));
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

    /// Creates `invoice` for `user` (`make` gets how many the user created before), or returns
    /// the one already created under `key`.
    pub(super) fn create(
        &self,
        user: &str,
        key: &str,
        make: impl FnOnce(u64) -> DemoInvoice,
    ) -> (DemoInvoice, bool) {
        let mut ledger = self.ledger.lock().expect("demo book lock");
        if let Some(existing) = ledger.users.get(user).and_then(|book| book.by_key(key)) {
            return (existing, false);
        }
        let number = ledger.next_number();
        let book = ledger.users.entry(user.to_owned()).or_default();
        let invoice = make(book.made);
        book.made += 1;
        book.touched = number;
        book.by_idempotency_key
            .insert(key.to_owned(), invoice.id.clone());
        book.created.push_back((number, invoice.clone()));
        let over_user_cap = book.created.len() > MAX_CREATED_PER_USER;
        ledger
            .created
            .insert(number, (user.to_owned(), invoice.id.clone()));
        if over_user_cap {
            ledger.drop_oldest_of(user);
        }
        while ledger.created.len() > MAX_CREATED {
            ledger.drop_oldest();
        }
        ledger.forget_idle_users();
        (invoice, true)
    }

    /// Voids the user's invoice `id` (voiding twice is fine; a paid one cannot be voided).
    pub(super) fn void(&self, user: &str, id: &str) -> Result<DemoInvoice, VoidError> {
        let current = self
            .invoices(user)
            .into_iter()
            .find(|i| i.id == id)
            .ok_or(VoidError::NotFound)?;
        if current.state == "paid" {
            return Err(VoidError::Paid);
        }
        let mut ledger = self.ledger.lock().expect("demo book lock");
        let number = ledger.next_number();
        let book = ledger.users.entry(user.to_owned()).or_default();
        book.touched = number;
        book.voided.insert(id.to_owned());
        ledger.forget_idle_users();
        Ok(DemoInvoice {
            state: "void",
            ..current
        })
    }

    /// Created invoices kept now, and users remembered.
    pub(super) fn kept(&self) -> (usize, usize) {
        let ledger = self.ledger.lock().expect("demo book lock");
        (ledger.created.len(), ledger.users.len())
    }
}

impl UserBook {
    fn by_key(&self, key: &str) -> Option<DemoInvoice> {
        let id = self.by_idempotency_key.get(key)?;
        self.created
            .iter()
            .find(|(_, invoice)| &invoice.id == id)
            .map(|(_, invoice)| invoice.clone())
    }

    /// Drops the user's oldest created invoice; its creation number.
    fn drop_oldest(&mut self) -> Option<u64> {
        let (number, invoice) = self.created.pop_front()?;
        self.by_idempotency_key.retain(|_, id| *id != invoice.id);
        self.voided.remove(&invoice.id);
        Some(number)
    }
}

impl Ledger {
    fn next_number(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    fn drop_oldest_of(&mut self, user: &str) {
        if let Some(number) = self.users.get_mut(user).and_then(UserBook::drop_oldest) {
            self.created.remove(&number);
        }
    }

    /// Drops the oldest created invoice of anyone's.
    fn drop_oldest(&mut self) {
        let Some((_, (user, _))) = self.created.pop_first() else {
            return;
        };
        if let Some(book) = self.users.get_mut(&user) {
            book.drop_oldest();
        }
    }

    /// Past [`MAX_USERS`], forgets the user who wrote least recently, with what they wrote.
    fn forget_idle_users(&mut self) {
        while self.users.len() > MAX_USERS {
            let Some(idle) = self
                .users
                .iter()
                .min_by_key(|(_, book)| book.touched)
                .map(|(user, _)| user.clone())
            else {
                return;
            };
            if let Some(book) = self.users.remove(&idle) {
                for (number, _) in book.created {
                    self.created.remove(&number);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn invoice(id: String) -> DemoInvoice {
        DemoInvoice {
            id,
            number: "DEMO-N1".into(),
            customer_name: "Acme".into(),
            customer_email: None,
            total_cents: 100,
            currency: "eur".into(),
            state: "open",
            created: "2026-12-01".into(),
            due: "2026-12-31".into(),
            description: None,
        }
    }

    fn create(book: &Book, user: &str, key: &str) -> bool {
        book.create(user, key, |n| invoice(format!("in_{user}_{n}")))
            .1
    }

    #[test]
    fn a_user_keeps_their_newest_invoices_and_a_repeated_key_creates_nothing() {
        let book = Book::default();
        for n in 0..MAX_CREATED_PER_USER + 10 {
            assert!(create(&book, "alice", &format!("k{n}")));
        }
        assert!(
            !create(&book, "alice", "k59"),
            "the newest key is remembered"
        );
        let created: Vec<String> = book
            .invoices("alice")
            .into_iter()
            .map(|i| i.id)
            .filter(|id| id.starts_with("in_alice"))
            .collect();
        assert_eq!(created.len(), MAX_CREATED_PER_USER);
        assert_eq!(
            created.first().unwrap(),
            "in_alice_10",
            "the oldest ten went"
        );
        assert_eq!(book.kept().0, MAX_CREATED_PER_USER);
        // A dropped invoice's key no longer names it: the same key creates a new one.
        assert!(create(&book, "alice", "k0"));
    }

    #[test]
    fn all_users_together_keep_the_newest_invoices_and_the_most_recent_users() {
        let book = Book::default();
        let per_user = 10;
        let users = MAX_CREATED / per_user + 50;
        for u in 0..users {
            for n in 0..per_user {
                create(&book, &format!("user{u}"), &format!("k{n}"));
            }
        }
        let (invoices, remembered) = book.kept();
        assert_eq!(invoices, MAX_CREATED);
        assert!(remembered <= MAX_USERS, "{remembered}");
        assert!(
            book.invoices("user0")
                .iter()
                .all(|i| !i.id.starts_with("in_user0_"))
        );
        let newest = format!("user{}", users - 1);
        assert_eq!(
            book.invoices(&newest)
                .iter()
                .filter(|i| i.id.starts_with("in_"))
                .count(),
            5 + per_user,
            "seeded and created"
        );
    }

    #[test]
    fn voiding_is_remembered_for_a_bounded_number_of_users() {
        let book = Book::default();
        for u in 0..MAX_USERS + 20 {
            let user = format!("voider{u}");
            let open = book
                .invoices(&user)
                .into_iter()
                .find(|i| i.state == "open")
                .unwrap();
            assert!(book.void(&user, &open.id).is_ok());
        }
        assert_eq!(book.kept().1, MAX_USERS);
    }
}
