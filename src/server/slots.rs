//! How many connections may be open: in all, and from one client address (IPv6 per /64, as
//! the rate limits count). A trusted proxy's connections count only towards the total: it
//! speaks for many clients, whom the rate limits tell apart by `X-Forwarded-For`.

use std::net::IpAddr;
use std::sync::Arc;

use ipnet::IpNet;

use crate::limits::counted_as;
use crate::quota::{Exceeded, Place, Quota};

/// One open connection's place; given back when dropped.
pub(super) type Slot = Place<IpAddr>;

/// The connection caps.
pub(super) struct Slots {
    quota: Arc<Quota<IpAddr>>,
    trusted_proxies: Vec<IpNet>,
}

impl Slots {
    pub(super) fn new(
        max_total: usize,
        max_per_address: usize,
        trusted_proxies: Vec<IpNet>,
    ) -> Self {
        Self {
            quota: Quota::new(max_total, max_per_address),
            trusted_proxies,
        }
    }

    /// A place for a connection from `peer`, if both caps allow one.
    pub(super) fn take(&self, peer: IpAddr) -> Result<Slot, Exceeded> {
        let trusted = self.trusted_proxies.iter().any(|net| net.contains(&peer));
        self.quota.take((!trusted).then(|| counted_as(peer)))
    }

    /// Connections open now.
    pub(super) fn open(&self) -> usize {
        self.quota.taken()
    }
}

/// The metric label of a refusal.
pub(super) fn label(exceeded: Exceeded) -> &'static str {
    match exceeded {
        Exceeded::Total => "total",
        Exceeded::Share => "address",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn ipv6_counts_per_64_and_a_trusted_proxy_only_towards_the_total() {
        let slots = Slots::new(10, 1, vec!["10.0.0.0/8".parse().unwrap()]);
        let _first = slots.take(ip("2001:db8::1")).unwrap();
        assert_eq!(slots.take(ip("2001:db8::2")).err(), Some(Exceeded::Share));
        let proxied: Vec<Slot> = (0..5)
            .map(|_| slots.take(ip("10.1.2.3")).unwrap())
            .collect();
        assert_eq!(slots.open(), 6);
        drop(proxied);
        assert_eq!(slots.open(), 1);
    }
}
