//! How many connections may be open: in all, and from one client address (IPv6 per /64, as
//! the rate limits count). A trusted proxy's connections count only towards the total: it
//! speaks for many clients, whom the rate limits tell apart by `X-Forwarded-For`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use ipnet::IpNet;

use crate::limits::counted_as;

/// The caps, and the connections open now.
pub struct Slots {
    max_total: usize,
    max_per_address: usize,
    trusted_proxies: Vec<IpNet>,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

/// Why a connection was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// As many connections as `--max-connections` are open.
    Total,
    /// This address holds `--max-connections-per-address` already.
    Address,
}

impl Refused {
    pub fn label(self) -> &'static str {
        match self {
            Refused::Total => "total",
            Refused::Address => "address",
        }
    }
}

/// One open connection's place; given back when dropped.
pub struct Slot {
    slots: Arc<Slots>,
    /// The address it counts against (`None`: a trusted proxy's).
    address: Option<IpAddr>,
}

impl Slots {
    pub fn new(max_total: usize, max_per_address: usize, trusted_proxies: Vec<IpNet>) -> Arc<Self> {
        Arc::new(Self {
            max_total,
            max_per_address,
            trusted_proxies,
            open: Mutex::new(Open::default()),
        })
    }

    /// A place for a connection from `peer`, if both caps allow one.
    pub fn take(self: &Arc<Self>, peer: IpAddr) -> Result<Slot, Refused> {
        let address =
            (!self.trusted_proxies.iter().any(|net| net.contains(&peer))).then(|| counted_as(peer));
        let mut open = self.open.lock().expect("slots lock");
        if open.total >= self.max_total {
            return Err(Refused::Total);
        }
        if let Some(address) = address {
            let held = open.by_address.entry(address).or_default();
            if *held >= self.max_per_address {
                return Err(Refused::Address);
            }
            *held += 1;
        }
        open.total += 1;
        Ok(Slot {
            slots: self.clone(),
            address,
        })
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.open.lock().expect("slots lock").total
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().expect("slots lock");
        open.total -= 1;
        if let Some(address) = self.address
            && let Some(held) = open.by_address.get_mut(&address)
        {
            *held -= 1;
            if *held == 0 {
                open.by_address.remove(&address);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn each_address_has_its_share_and_all_share_the_total() {
        let slots = Slots::new(3, 2, vec![]);
        let a1 = slots.take(ip("192.0.2.1")).unwrap();
        let _a2 = slots.take(ip("192.0.2.1")).unwrap();
        assert_eq!(slots.take(ip("192.0.2.1")).err(), Some(Refused::Address));
        let _b = slots.take(ip("192.0.2.2")).unwrap();
        assert_eq!(slots.take(ip("192.0.2.3")).err(), Some(Refused::Total));
        drop(a1);
        assert_eq!(slots.open(), 2);
        assert!(slots.take(ip("192.0.2.1")).is_ok());
    }

    #[test]
    fn ipv6_counts_per_64_and_a_trusted_proxy_only_towards_the_total() {
        let slots = Slots::new(10, 1, vec!["10.0.0.0/8".parse().unwrap()]);
        let _first = slots.take(ip("2001:db8::1")).unwrap();
        assert_eq!(slots.take(ip("2001:db8::2")).err(), Some(Refused::Address));
        let proxied: Vec<Slot> = (0..5)
            .map(|_| slots.take(ip("10.1.2.3")).unwrap())
            .collect();
        assert_eq!(slots.open(), 6);
        drop(proxied);
        assert_eq!(slots.open(), 1);
    }
}
