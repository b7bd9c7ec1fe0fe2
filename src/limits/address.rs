//! Which client address a request counts against.
//!
//! The peer's address, unless the peer is a trusted proxy: then the rightmost
//! `X-Forwarded-For` entry that is not itself a trusted proxy (entries further left are
//! whatever the client chose to send). IPv6 addresses count per /64, the block one
//! subscriber usually holds, so that rotating through one's own block gains nothing.

use std::net::{IpAddr, Ipv6Addr, SocketAddr};

use axum::extract::{ConnectInfo, Request};
use ipnet::IpNet;

/// The address `request` counts against; `::` when the server did not record the peer.
pub(crate) fn client_address(request: &Request, trusted_proxies: &[IpNet]) -> IpAddr {
    let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() else {
        return IpAddr::V6(Ipv6Addr::UNSPECIFIED);
    };
    let trusted = |ip: &IpAddr| trusted_proxies.iter().any(|net| net.contains(ip));
    let mut client = peer.ip();
    if trusted(&client) {
        let forwarded: Vec<IpAddr> = request
            .headers()
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map_while(|entry| entry.trim().parse::<IpAddr>().ok())
            .collect();
        for hop in forwarded.iter().rev() {
            client = *hop;
            if !trusted(hop) {
                break;
            }
        }
    }
    counted_as(client)
}

/// IPv4 as is; IPv6 by its /64 (an IPv4-mapped one as the IPv4 address).
pub(crate) fn counted_as(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(peer: &str, forwarded: &[&str]) -> Request {
        let mut builder = axum::http::Request::builder().uri("/mcp");
        for value in forwarded {
            builder = builder.header("x-forwarded-for", *value);
        }
        let mut request = builder.body(axum::body::Body::empty()).unwrap();
        let peer: SocketAddr = peer.parse().unwrap();
        request.extensions_mut().insert(ConnectInfo(peer));
        request
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn nets(list: &[&str]) -> Vec<IpNet> {
        list.iter().map(|n| n.parse().unwrap()).collect()
    }

    #[test]
    fn forwarded_for_counts_only_from_trusted_proxies() {
        let r = request("10.0.0.2:4000", &["6.6.6.6, 203.0.113.9"]);
        assert_eq!(client_address(&r, &[]), ip("10.0.0.2"));
        assert_eq!(
            client_address(&r, &nets(&["10.0.0.0/8"])),
            ip("203.0.113.9")
        );
        // From an untrusted peer the header is the client's own invention.
        assert_eq!(
            client_address(&r, &nets(&["192.168.0.0/16"])),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn the_rightmost_untrusted_entry_is_the_client() {
        let proxies = nets(&["10.0.0.0/8"]);
        let two_hops = request("10.0.0.2:4000", &["6.6.6.6, 203.0.113.9, 10.1.1.1"]);
        assert_eq!(client_address(&two_hops, &proxies), ip("203.0.113.9"));
        let split = request("10.0.0.2:4000", &["6.6.6.6", "203.0.113.9"]);
        assert_eq!(client_address(&split, &proxies), ip("203.0.113.9"));
        let garbage = request("10.0.0.2:4000", &["not an address"]);
        assert_eq!(client_address(&garbage, &proxies), ip("10.0.0.2"));
    }

    #[test]
    fn ipv6_counts_per_64() {
        let a = request("[2001:db8:1:2:aaaa::1]:4000", &[]);
        let b = request("[2001:db8:1:2:bbbb::9]:4000", &[]);
        assert_eq!(client_address(&a, &[]), ip("2001:db8:1:2::"));
        assert_eq!(client_address(&a, &[]), client_address(&b, &[]));
        let mapped = request("[::ffff:192.0.2.7]:4000", &[]);
        assert_eq!(client_address(&mapped, &[]), ip("192.0.2.7"));
    }
}
