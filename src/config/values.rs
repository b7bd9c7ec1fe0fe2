//! The typed values of the settings, each parsed once where it is read (flag, variable or
//! file), with an error that says what is wrong with it.

use std::fmt;
use std::str::FromStr;

use url::Url;

/// The base URL where users and clients reach grantry: http or https, no path, no query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl(Url);

impl PublicUrl {
    /// `http://` and the listen address: the default when none is given.
    pub(crate) fn of_listen_address(listen: std::net::SocketAddr) -> Self {
        Self(Url::parse(&format!("http://{listen}")).expect("an address makes a URL"))
    }

    pub(crate) fn as_url(&self) -> &Url {
        &self.0
    }

    /// Its origin as browsers send it in `Origin` (`https://host[:port]`).
    pub(crate) fn origin(&self) -> String {
        self.0.origin().ascii_serialization()
    }

    /// Whether it is https (then cookies carry `Secure` and the `__Host-` prefix).
    pub(crate) fn is_https(&self) -> bool {
        self.0.scheme() == "https"
    }
}

/// Written without a trailing slash, so `format!("{public_url}/mcp")` is a URL.
impl fmt::Display for PublicUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str().trim_end_matches('/'))
    }
}

impl FromStr for PublicUrl {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let url = Url::parse(text).map_err(|e| format!("not a URL: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err("must be an http or https URL".into());
        }
        let credentials = !url.username().is_empty() || url.password().is_some();
        if url.query().is_some() || url.fragment().is_some() || credentials {
            return Err("must not carry a query, a fragment or credentials".into());
        }
        if url.path() != "/" {
            return Err(
                "must be an origin without a path (grantry serves its routes at the root)".into(),
            );
        }
        Ok(Self(url))
    }
}

/// A browser origin allowed to call `/mcp`: `scheme://host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin(String);

impl Origin {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for Origin {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let url = Url::parse(text).map_err(|e| format!("`{text}` is not an origin: {e}"))?;
        if url.path() != "/" || url.query().is_some() || url.host().is_none() {
            return Err(format!("`{text}` is not an origin (scheme://host[:port])"));
        }
        Ok(Self(text.to_owned()))
    }
}

/// A proxy whose `X-Forwarded-For` is believed: an address or a CIDR range (an address is a
/// range of one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProxyRange(pub ipnet::IpNet);

impl FromStr for ProxyRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.parse::<ipnet::IpNet>()
            .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
            .map(Self)
            .map_err(|_| format!("`{text}` is not an address or a CIDR range"))
    }
}

/// An OAuth scope (RFC 6749 §3.3 scope-token): written into `WWW-Authenticate` as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scope(pub String);

impl FromStr for Scope {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let scope_char = |c: char| c == '!' || ('#'..='[').contains(&c) || (']'..='~').contains(&c);
        if text.is_empty() || !text.chars().all(scope_char) {
            return Err(format!(
                "`{text}` is not a scope (printable ASCII without spaces, `\"` or `\\`)"
            ));
        }
        Ok(Self(text.to_owned()))
    }
}

/// `CLAIM=VALUE`: an access token whose claim `CLAIM` is the string `VALUE` (or an array
/// holding it) has no person behind it (`--non-interactive-claim`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClaimMatch {
    pub(crate) claim: String,
    pub(crate) value: String,
}

impl FromStr for ClaimMatch {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let (claim, value) = text
            .split_once('=')
            .map(|(c, v)| (c.trim(), v.trim()))
            .filter(|(c, v)| !c.is_empty() && !v.is_empty())
            .ok_or_else(|| format!("`{text}` is not CLAIM=VALUE (e.g. gty=client-credentials)"))?;
        if claim == "sub" || claim == "iss" {
            return Err(format!(
                "`{claim}` names who is calling, not what kind of caller: give a claim such \
                 as gty or grant_type"
            ));
        }
        Ok(Self {
            claim: claim.to_owned(),
            value: value.to_owned(),
        })
    }
}

/// A comma-separated list (`a, b,c`): items trimmed, empty ones skipped, each parsed. In the
/// TOML file it is an array (or the same comma-separated string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommaList<T>(pub Vec<T>);

impl<T> Default for CommaList<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T: FromStr<Err: fmt::Display>> FromStr for CommaList<T> {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        text.split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| T::from_str(item).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()
            .map(Self)
    }
}

/// A value parser for whole seconds within `min..=max`, read as a `Duration`.
pub(super) use grantry_base::clock::seconds;

/// A value parser for a count of at least one.
pub(super) fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a count")),
    }
}

/// A value parser for a per-minute rate of at least one.
pub(super) fn per_minute(text: &str) -> Result<u32, String> {
    match text.parse::<u32>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a number of requests")),
    }
}
