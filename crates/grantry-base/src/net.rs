//! The network words both the server and the bridge use: which URLs name this machine, the
//! process-wide TLS provider, a transport error's reason without its URL, and how long a
//! peer's `Retry-After` asks to wait.

use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, RETRY_AFTER};
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

/// How long the answer's `Retry-After` asks to wait (RFC 9110 10.2.3): delay seconds, or an
/// HTTP date (a past one is no wait). `None` when the header is absent or unreadable; the
/// caller caps what it honours.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    retry_after_at(headers, SystemTime::now())
}

fn retry_after_at(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
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
    #[test]
    fn retry_after_reads_seconds_and_dates() {
        use reqwest::header::{HeaderMap, HeaderValue, RETRY_AFTER};
        use std::time::{Duration, UNIX_EPOCH};
        // Wed, 21 Oct 2015 07:28:00 GMT.
        let now = UNIX_EPOCH + Duration::from_secs(1_445_412_480);
        let asked = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
            super::retry_after_at(&headers, now)
        };
        assert_eq!(asked("120"), Some(Duration::from_secs(120)));
        assert_eq!(asked(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(
            asked("Wed, 21 Oct 2015 07:29:30 GMT"),
            Some(Duration::from_secs(90))
        );
        assert_eq!(asked("Wed, 21 Oct 2015 07:00:00 GMT"), Some(Duration::ZERO));
        assert_eq!(asked("soon"), None);
        assert_eq!(asked("-5"), None);
        assert_eq!(super::retry_after_at(&HeaderMap::new(), now), None);
    }

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
