//! The one shape of every cookie grantry sets: `HttpOnly`, `SameSite=Lax` (Strict would drop
//! it on a provider's or issuer's redirect back), `Path=/`, no `Domain`; on an https public
//! URL also `Secure`, which the `__Host-` prefix of the names requires.

use axum_extra::extract::cookie::{Cookie, SameSite};

/// A cookie living `max_age_secs` (0 removes it).
pub fn host_cookie(name: String, value: String, https: bool, max_age_secs: i64) -> Cookie<'static> {
    Cookie::build((name, value))
        .http_only(true)
        .secure(https)
        .same_site(SameSite::Lax)
        .path("/")
        .max_age(time::Duration::seconds(max_age_secs))
        .build()
}
