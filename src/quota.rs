//! A pool of places with a total and a per-owner share: what one process can give at once
//! (open connections, retries held open), so that no single owner (a client address, a
//! principal) can take all of it. Places come back when their [`Place`] drops.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// The caps, and the places taken now.
pub(crate) struct Quota<K> {
    total: usize,
    share: usize,
    taken: Mutex<Taken<K>>,
}

struct Taken<K> {
    total: usize,
    by_owner: HashMap<K, usize>,
}

/// Why no place was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exceeded {
    /// Every place of the pool is taken.
    Total,
    /// The owner holds its whole share.
    Share,
}

/// One place taken; given back when dropped.
pub(crate) struct Place<K: Hash + Eq> {
    quota: Arc<Quota<K>>,
    owner: Option<K>,
}

impl<K: Hash + Eq + Clone> Quota<K> {
    pub(crate) fn new(total: usize, share: usize) -> Arc<Self> {
        Arc::new(Self {
            total,
            share,
            taken: Mutex::new(Taken {
                total: 0,
                by_owner: HashMap::new(),
            }),
        })
    }

    /// A place for `owner` (`None`: an owner counted only towards the total), if the total and
    /// its share allow one.
    pub(crate) fn take(self: &Arc<Self>, owner: Option<K>) -> Result<Place<K>, Exceeded> {
        let mut taken = self.taken.lock().expect("quota lock");
        if taken.total >= self.total {
            return Err(Exceeded::Total);
        }
        if let Some(owner) = &owner {
            let held = taken.by_owner.entry(owner.clone()).or_default();
            if *held >= self.share {
                return Err(Exceeded::Share);
            }
            *held += 1;
        }
        taken.total += 1;
        Ok(Place {
            quota: self.clone(),
            owner,
        })
    }

    /// Places taken now.
    pub(crate) fn taken(&self) -> usize {
        self.taken.lock().expect("quota lock").total
    }
}

impl<K: Hash + Eq> Drop for Place<K> {
    fn drop(&mut self) {
        let mut taken = self.quota.taken.lock().expect("quota lock");
        taken.total -= 1;
        if let Some(owner) = &self.owner
            && let Some(held) = taken.by_owner.get_mut(owner)
        {
            *held -= 1;
            if *held == 0 {
                taken.by_owner.remove(owner);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_owner_has_its_share_and_all_share_the_total() {
        let quota = Quota::new(3, 2);
        let a1 = quota.take(Some("a")).unwrap();
        let _a2 = quota.take(Some("a")).unwrap();
        assert_eq!(quota.take(Some("a")).err(), Some(Exceeded::Share));
        let _b = quota.take(Some("b")).unwrap();
        assert_eq!(quota.take(Some("c")).err(), Some(Exceeded::Total));
        drop(a1);
        assert_eq!(quota.taken(), 2);
        assert!(quota.take(Some("a")).is_ok());
    }

    #[test]
    fn an_owner_counted_only_in_the_total_has_no_share() {
        let quota = Quota::new(10, 1);
        let many: Vec<_> = (0..5).map(|_| quota.take(None).unwrap()).collect();
        let _one = quota.take(Some("a")).unwrap();
        assert_eq!(quota.taken(), 6);
        drop(many);
        assert_eq!(quota.taken(), 1);
        assert_eq!(quota.take(Some("a")).err(), Some(Exceeded::Share));
    }
}
