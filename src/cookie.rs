//! The one shape of every cookie grantry sets: `HttpOnly`, `SameSite=Lax` (Strict would drop
//! it on a provider's or issuer's redirect back), `Path=/`, no `Domain`; on an https public
//! URL also `Secure`, which the `__Host-` prefix of the names requires.

use axum_extra::extract::cookie::{Cookie, SameSite};

use crate::seal::digest;

/// `base` with the `__Host-` prefix on https (browsers then insist on `Secure`, `Path=/` and no
/// `Domain`, so no subdomain can plant or shadow it).
pub(crate) fn host_name(base: &str, https: bool) -> String {
    let prefix = if https { "__Host-" } else { "" };
    format!("{prefix}{base}")
}

/// One cookie per `key` (a flow, a login): `base-` plus a short hash of the key, so several
/// can live in one browser without overwriting each other.
pub(crate) fn keyed_name(base: &str, domain: &str, key: &str, https: bool) -> String {
    let tag: String = digest(domain, &[key.as_bytes()]).chars().take(16).collect();
    host_name(&format!("{base}-{tag}"), https)
}

/// A cookie living `max_age_secs` (0 removes it).
pub(crate) fn host_cookie(
    name: String,
    value: String,
    https: bool,
    max_age_secs: i64,
) -> Cookie<'static> {
    Cookie::build((name, value))
        .http_only(true)
        .secure(https)
        .same_site(SameSite::Lax)
        .path("/")
        .max_age(time::Duration::seconds(max_age_secs))
        .build()
}
