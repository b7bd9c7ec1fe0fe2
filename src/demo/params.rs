//! Strict parsing of OAuth request parameters (query strings and form bodies).
//!
//! RFC 6749 §3.1: a parameter sent without a value is treated as omitted, and no parameter may
//! appear twice. A repeated parameter is refused rather than resolved by "first wins" or "last
//! wins", because two parts of a system that resolve it differently is how parameter-pollution
//! attacks work.

use axum::http::HeaderMap;
use axum::http::header::CONTENT_TYPE;

/// Decoded name/value pairs of one request.
pub(super) struct Params {
    pairs: Vec<(String, String)>,
}

/// A parameter appeared more than once. Callers know which one they asked for.
#[derive(Debug)]
pub(super) struct Repeated;

impl Params {
    /// Parses `application/x-www-form-urlencoded` bytes (a query string or a form body).
    pub(super) fn parse(input: &[u8]) -> Self {
        Self {
            pairs: url::form_urlencoded::parse(input)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        }
    }

    /// The value of `name`: `None` when absent or empty, an error when given more than once.
    pub(super) fn get(&self, name: &'static str) -> Result<Option<&str>, Repeated> {
        let mut found = self.pairs.iter().filter(|(k, _)| k == name);
        let first = found.next();
        if found.next().is_some() {
            return Err(Repeated);
        }
        Ok(first.map(|(_, v)| v.as_str()).filter(|v| !v.is_empty()))
    }
}

/// Whether the request body is declared as a URL-encoded form (parameters are ignored).
pub(super) fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| {
            essence
                .trim()
                .eq_ignore_ascii_case("application/x-www-form-urlencoded")
        })
}
