//! The browser origins allowed to call `/mcp` (DNS rebinding, cross-site pages): a request
//! from a browser names its `Origin`, which must be listed; one without (not from a browser)
//! passes. Matched as rmcp matched them: scheme and host (any case), and the port.

use axum::http::HeaderMap;
use axum::http::header::ORIGIN;

/// The browser origins allowed to call `/mcp`.
pub(crate) struct AllowedOrigins(Vec<Origin>);

#[derive(Debug, PartialEq, Eq)]
enum Origin {
    /// `null`, allowed only when listed as such.
    Null,
    Site {
        scheme: String,
        host: String,
        /// `None`: any port (an entry without one, or `:*`).
        port: Option<u16>,
    },
}

impl Origin {
    fn parse(text: &str, listed: bool) -> Option<Self> {
        if text == "null" {
            return Some(Self::Null);
        }
        let (scheme, rest) = text.split_once("://")?;
        let (host, port) = match rest.find(']') {
            Some(end) => (&rest[..=end], rest[end + 1..].strip_prefix(':')),
            None => match rest.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (rest, None),
            },
        };
        let port = match port {
            Some("*") if listed => None,
            Some(port) => Some(port.parse::<u16>().ok()?),
            None => None,
        };
        if host.is_empty() || host.contains(['/', '@', '?', '#']) {
            return None;
        }
        let scheme = scheme.to_ascii_lowercase();
        // An origin a browser sends names its port only when it is not the scheme's own.
        let port = port.or(match (listed, scheme.as_str()) {
            (false, "http") => Some(80),
            (false, "https") => Some(443),
            _ => None,
        });
        Some(Self::Site {
            scheme,
            host: host.to_ascii_lowercase(),
            port,
        })
    }

    fn allows(&self, asked: &Origin) -> bool {
        match (self, asked) {
            (Self::Null, Self::Null) => true,
            (
                Self::Site { scheme, host, port },
                Self::Site {
                    scheme: asked_scheme,
                    host: asked_host,
                    port: asked_port,
                },
            ) => {
                scheme == asked_scheme
                    && host == asked_host
                    && port.is_none_or(|p| *asked_port == Some(p))
            }
            _ => false,
        }
    }
}

/// Why an `Origin` is refused (403, as rmcp words it).
pub(super) enum OriginRefused {
    Encoding,
    Invalid,
    NotAllowed,
}

impl OriginRefused {
    pub(super) fn words(&self) -> &'static str {
        match self {
            Self::Encoding => "Forbidden: Invalid Origin header encoding",
            Self::Invalid => "Forbidden: Invalid Origin header",
            Self::NotAllowed => "Forbidden: Origin header is not allowed",
        }
    }
}

impl AllowedOrigins {
    pub(crate) fn new(listed: &[String]) -> Self {
        Self(
            listed
                .iter()
                .filter_map(|o| Origin::parse(o, true))
                .collect(),
        )
    }

    /// A request without `Origin` (not from a browser) passes; one with an origin passes
    /// when it is listed.
    pub(super) fn check(&self, headers: &HeaderMap) -> Result<(), OriginRefused> {
        let Some(origin) = headers.get(ORIGIN) else {
            return Ok(());
        };
        let origin = origin.to_str().map_err(|_| OriginRefused::Encoding)?;
        let asked = Origin::parse(origin, false).ok_or(OriginRefused::Invalid)?;
        if self.0.iter().any(|allowed| allowed.allows(&asked)) {
            Ok(())
        } else {
            Err(OriginRefused::NotAllowed)
        }
    }
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn with(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn origins_match_scheme_host_and_port() {
        let allowed = AllowedOrigins::new(&[
            "http://127.0.0.1:8080".into(),
            "https://app.example".into(),
            "http://any.example:*".into(),
        ]);
        let check = |o: &str| allowed.check(&with(&[("origin", o)])).is_ok();
        assert!(check("http://127.0.0.1:8080"));
        assert!(!check("http://127.0.0.1"), "the default port is another");
        assert!(
            check("https://APP.example:8443"),
            "a listed origin without a port"
        );
        assert!(check("http://any.example:1234"));
        assert!(!check("https://evil.example"));
        assert!(!check("null"));
        let loopback = AllowedOrigins::new(&["http://[::1]:8080".into()]);
        assert!(
            loopback
                .check(&with(&[("origin", "http://[::1]:8080")]))
                .is_ok()
        );
        assert!(
            loopback
                .check(&with(&[("origin", "http://[::1]:9090")]))
                .is_err()
        );
        assert!(allowed.check(&HeaderMap::new()).is_ok(), "no Origin");
        assert!(matches!(
            allowed.check(&with(&[("origin", "not an origin")])),
            Err(OriginRefused::Invalid)
        ));
    }
}
