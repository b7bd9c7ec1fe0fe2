//! Which `Host` a request may name: the defence against DNS rebinding. A page on another
//! site that rebinds its own name to grantry's address reaches grantry with its own name in
//! `Host`; only grantry's names are answered: the public URL's host, the listen address, and
//! the loopback spellings when listening on loopback (those are no rebinding risk).
//!
//! `/mcp` gives the list to rmcp; the browser routes check it themselves
//! (`crate::app`). Probes and metrics (`/healthz`, `/readyz`, `/metrics`) are not checked:
//! orchestrators call them by the pod's address.

use axum::http::uri::Authority;
use axum::http::{HeaderMap, Uri, header::HOST};

use crate::config::Config;

/// How this machine is named on loopback: answered (and allowed as origins) on the listen
/// port when grantry listens on loopback, where they are no rebinding risk.
pub(crate) const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// A host grantry answers to, with its port, or any port when `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Allowed {
    /// Lower-cased, without an IPv6 literal's brackets.
    host: String,
    port: Option<u16>,
}

/// The hosts grantry answers to. Built once at start.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts {
    /// As written, for rmcp's own check.
    spelled: Vec<String>,
    allowed: Vec<Allowed>,
}

impl AllowedHosts {
    /// The public URL's host (with and without its port), the listen address, and when
    /// listening on loopback the loopback names on the listen port.
    pub(crate) fn for_config(config: &Config) -> Self {
        let public = config.public_url.as_url();
        let mut spelled = vec![config.listen.to_string(), config.listen.ip().to_string()];
        if let Some(host) = public.host_str() {
            spelled.push(host.to_owned());
            if let Some(port) = public.port() {
                spelled.push(format!("{host}:{port}"));
            }
        }
        if config.listen.ip().is_loopback() {
            let port = config.listen.port();
            for host in LOOPBACK_NAMES {
                spelled.push(format!("{host}:{port}"));
            }
        }
        Self::new(spelled)
    }

    fn new(spelled: Vec<String>) -> Self {
        let allowed = spelled.iter().filter_map(|s| parse(s)).collect();
        Self { spelled, allowed }
    }

    /// The list as rmcp's `allowed_hosts` takes it.
    pub(crate) fn spelled(&self) -> &[String] {
        &self.spelled
    }

    /// Whether `host` (a `Host` header's value) is one of grantry's.
    pub(crate) fn allows(&self, host: &str) -> bool {
        let Some(asked) = parse(host) else {
            return false;
        };
        self.allowed.iter().any(|allowed| {
            allowed.host == asked.host && allowed.port.is_none_or(|port| asked.port == Some(port))
        })
    }

    /// Whether a request names one of grantry's hosts: its `Host` header (exactly one), or
    /// its URI's authority where HTTP/2 carries it instead.
    pub(crate) fn allows_request(&self, headers: &HeaderMap, uri: &Uri) -> bool {
        let mut hosts = headers.get_all(HOST).iter();
        match (hosts.next(), hosts.next()) {
            (Some(host), None) => host.to_str().is_ok_and(|host| self.allows(host)),
            (None, _) => uri.authority().is_some_and(|a| self.allows(a.as_str())),
            (Some(_), Some(_)) => false,
        }
    }
}

fn parse(text: &str) -> Option<Allowed> {
    let text = text.trim();
    // A `Host` carries no user name: one that does is not grantry's.
    if text.is_empty() || text.contains('@') {
        return None;
    }
    let authority: Authority = text.parse().ok()?;
    Some(Allowed {
        host: authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase(),
        port: authority.port_u16(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(list: &[&str]) -> AllowedHosts {
        AllowedHosts::new(list.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn only_grantrys_own_names_are_answered() {
        let allowed = hosts(&["connector.example.com", "127.0.0.1:8080", "[::1]:8080"]);
        assert!(allowed.allows("connector.example.com"));
        assert!(
            allowed.allows("Connector.Example.com:443"),
            "any port without one"
        );
        assert!(allowed.allows("127.0.0.1:8080"));
        assert!(allowed.allows("[::1]:8080"));
        assert!(!allowed.allows("127.0.0.1:9090"), "another port");
        assert!(
            !allowed.allows("127.0.0.1"),
            "no port where one is required"
        );
        assert!(!allowed.allows("attacker.example:8080"));
        assert!(!allowed.allows("connector.example.com.attacker.example"));
        assert!(!allowed.allows(""));
        assert!(!allowed.allows("user@connector.example.com"));
    }

    #[test]
    fn a_request_must_name_one_host() {
        let allowed = hosts(&["127.0.0.1:8080"]);
        let uri: Uri = "/connections".parse().unwrap();
        let mut headers = HeaderMap::new();
        assert!(!allowed.allows_request(&headers, &uri), "no Host at all");
        headers.insert(HOST, "127.0.0.1:8080".parse().unwrap());
        assert!(allowed.allows_request(&headers, &uri));
        headers.append(HOST, "attacker.example".parse().unwrap());
        assert!(!allowed.allows_request(&headers, &uri), "two Host headers");
        let http2: Uri = "http://127.0.0.1:8080/connections".parse().unwrap();
        assert!(allowed.allows_request(&HeaderMap::new(), &http2));
    }
}
