//! The network words both the server and the bridge use: which URLs name this machine, the
//! process-wide TLS provider, and a transport error's reason without its URL.

use url::Url;

/// Whether `url` names this machine (a loopback address, or `localhost` in any case): traffic
/// that never leaves it, where plain http is acceptable.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// Makes ring rustls's process-wide crypto provider (reqwest is built without one); call it
/// before the first client is built. Later calls do nothing.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A short reason for a transport error, without the URL (which may carry a query).
pub fn transport_reason(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timed out".into()
    } else if error.is_connect() {
        "connection failed".into()
    } else {
        let mut text = error.to_string();
        if let Some(url) = error.url() {
            text = text.replace(url.as_str(), "<url>");
        }
        text
    }
}

/// This machine's name as the kernel knows it (a container's is its own), for an operator
/// telling replicas apart; `unknown host` where it cannot be read.
pub fn host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok())
        .map(|name| name.trim().to_owned())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown host".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_a_loopback_address_or_localhost() {
        for url in ["http://127.0.0.1:1/", "http://[::1]/", "http://LocalHost/x"] {
            assert!(is_loopback(&Url::parse(url).unwrap()), "{url}");
        }
        for url in [
            "http://10.0.0.1/",
            "https://example.com/",
            "http://localhost.example/",
        ] {
            assert!(!is_loopback(&Url::parse(url).unwrap()), "{url}");
        }
    }
}
