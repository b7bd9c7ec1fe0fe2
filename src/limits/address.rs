//! Which client address a request counts against.

use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use axum::extract::Request;

/// The peer's address, or behind a trusted proxy the last `X-Forwarded-For` entry (the one
/// that proxy appended; earlier entries are whatever the client chose to send).
pub fn client_address(request: &Request, trust_forwarded_for: bool) -> String {
    if trust_forwarded_for
        && let Some(forwarded) = request
            .headers()
            .get_all("x-forwarded-for")
            .iter()
            .next_back()
            .and_then(|v| v.to_str().ok())
        && let Some(Ok(ip)) = forwarded
            .rsplit(',')
            .next()
            .map(|last| last.trim().parse::<IpAddr>())
    {
        return ip.to_string();
    }
    request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip().to_string())
        .unwrap_or_else(|| "unknown".to_owned())
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

    #[test]
    fn forwarded_for_counts_only_when_trusted_and_only_its_last_entry() {
        let r = request("10.0.0.2:4000", &["6.6.6.6, 203.0.113.9"]);
        assert_eq!(client_address(&r, false), "10.0.0.2");
        assert_eq!(client_address(&r, true), "203.0.113.9");
        let spoofed = request("10.0.0.2:4000", &["6.6.6.6", "203.0.113.9"]);
        assert_eq!(client_address(&spoofed, true), "203.0.113.9");
        let garbage = request("10.0.0.2:4000", &["not an address"]);
        assert_eq!(client_address(&garbage, true), "10.0.0.2");
    }
}
