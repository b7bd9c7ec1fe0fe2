//! The binding cookie: ties the provider's callback to the browser that pressed Continue.
//!
//! Without it, an authorize URL copied out of one browser and opened in another would land
//! that other person's account in the first person's flow (GHSA-rww4-4w9c-7733). The cookie
//! holds 128 random bits; the flow keeps only their hash. It is `HttpOnly` and
//! `SameSite=Lax` (Strict would drop it on the provider's redirect back); on an https public
//! URL it is also `Secure` with the `__Host-` prefix. Each flow has its own cookie name, so
//! two sign-ins in one browser do not overwrite each other.

use axum::http::HeaderMap;
use axum_extra::extract::cookie::{Cookie, CookieJar};

use crate::cookie::{host_cookie, keyed_name};

use crate::flows::FLOW_TTL_SECS;
use crate::seal::digest;

/// The cookie's name for one flow.
pub(super) fn cookie_name(flow_id: &str, https: bool) -> String {
    keyed_name(
        "grantry-bind",
        "grantry/binding-cookie-name/v1",
        flow_id,
        https,
    )
}

/// The hash of a cookie value, as the flow stores it.
pub(super) fn value_hash(value: &str) -> String {
    digest("grantry/binding-cookie/v1", &[value.as_bytes()])
}

/// The `Set-Cookie` for a new flow.
pub(super) fn set_cookie(flow_id: &str, value: String, https: bool) -> Cookie<'static> {
    host_cookie(cookie_name(flow_id, https), value, https, FLOW_TTL_SECS)
}

/// The cookie that removes a flow's binding once the callback is done.
pub(super) fn removal(flow_id: &str, https: bool) -> Cookie<'static> {
    host_cookie(cookie_name(flow_id, https), String::new(), https, 0)
}

/// Whether the browser sent the binding cookie whose hash the flow stored.
pub(super) fn matches(
    headers: &HeaderMap,
    flow_id: &str,
    https: bool,
    expected_hash: &str,
) -> bool {
    let jar = CookieJar::from_headers(headers);
    jar.get(&cookie_name(flow_id, https))
        .is_some_and(|c| crate::seal::constant_time_eq(&value_hash(c.value()), expected_hash))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_cookies_are_host_prefixed_and_secure_http_ones_neither() {
        let secure = set_cookie("flow-1", "v".into(), true).to_string();
        assert!(secure.starts_with("__Host-grantry-bind-"), "{secure}");
        for part in [
            "HttpOnly",
            "Secure",
            "SameSite=Lax",
            "Path=/",
            "Max-Age=600",
        ] {
            assert!(secure.contains(part), "{part} in {secure}");
        }
        assert!(!secure.contains("Domain"));
        let plain = set_cookie("flow-1", "v".into(), false).to_string();
        assert!(plain.starts_with("grantry-bind-") && !plain.contains("Secure"));
        assert_ne!(cookie_name("flow-1", true), cookie_name("flow-2", true));
    }
}
