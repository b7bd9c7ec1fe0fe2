//! The browser session of the `oidc` identity: who signed in at the issuer, sealed into a
//! short-lived cookie (`__Host-` prefixed, `Secure`, `HttpOnly`, `SameSite=Lax` on https).
//! Sealing, not signing: the cookie reveals nothing, and no server-side session store is
//! needed, so any replica reads it.

use axum_extra::extract::cookie::{Cookie, CookieJar};
use http::HeaderMap;
use serde::{Deserialize, Serialize};

use super::Principal;
use crate::cookie::{host_cookie, host_name};
use crate::seal::{Purpose, Sealer};

/// How long a browser stays signed in to grantry.
pub(crate) const SESSION_TTL_SECS: i64 = 3600;

#[derive(Serialize, Deserialize)]
struct SessionClaims {
    iss: String,
    sub: String,
    exp: i64,
}

/// A signed-in browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub(crate) principal: Principal,
    pub(crate) expires_at: i64,
}

pub fn cookie_name(https: bool) -> String {
    host_name("grantry-session", https)
}

/// The cookie that signs `principal` in for [`SESSION_TTL_SECS`].
pub(crate) fn issue(
    sealer: &Sealer,
    principal: &Principal,
    now: i64,
    https: bool,
) -> Cookie<'static> {
    let claims = SessionClaims {
        iss: principal.issuer.clone(),
        sub: principal.subject.clone(),
        exp: now + SESSION_TTL_SECS,
    };
    let value = sealer.seal_timed(Purpose::BrowserSession, b"", &claims, now, SESSION_TTL_SECS);
    host_cookie(cookie_name(https), value, https, SESSION_TTL_SECS)
}

/// The browser's session, if its cookie opens and has not expired.
pub fn read(sealer: &Sealer, headers: &HeaderMap, now: i64, https: bool) -> Option<Session> {
    let jar = CookieJar::from_headers(headers);
    let sealed = jar.get(&cookie_name(https))?;
    let claims: SessionClaims = sealer
        .open_timed(Purpose::BrowserSession, b"", sealed.value(), now)
        .ok()?;
    Some(Session {
        principal: Principal {
            issuer: claims.iss,
            subject: claims.sub,
        },
        expires_at: claims.exp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seal::KeyRing;

    fn sealer() -> Sealer {
        Sealer::new(
            KeyRing::from_keys(&[[7; 32]]).unwrap(),
            "https://g.example/mcp",
        )
    }

    fn headers_with(cookie: &Cookie<'_>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let pair = format!("{}={}", cookie.name(), cookie.value());
        headers.insert(http::header::COOKIE, pair.parse().unwrap());
        headers
    }

    #[test]
    fn a_session_reads_back_until_it_expires_and_not_when_altered() {
        let sealer = sealer();
        let alice = Principal {
            issuer: "https://id.example".into(),
            subject: "alice".into(),
        };
        let cookie = issue(&sealer, &alice, 1_000, true);
        let text = cookie.to_string();
        assert!(text.starts_with("__Host-grantry-session="), "{text}");
        for part in [
            "HttpOnly",
            "Secure",
            "SameSite=Lax",
            "Path=/",
            "Max-Age=3600",
        ] {
            assert!(text.contains(part), "{part} in {text}");
        }
        assert!(!text.contains("Domain"));
        let read_at = |now| read(&sealer, &headers_with(&cookie), now, true);
        assert_eq!(read_at(1_010).unwrap().principal, alice);
        assert_eq!(read_at(1_010).unwrap().expires_at, 1_000 + SESSION_TTL_SECS);
        assert!(read_at(1_000 + SESSION_TTL_SECS + 120).is_none());
        let mut altered = cookie.clone();
        let mut value = altered.value().to_owned();
        value.pop();
        altered.set_value(value);
        assert!(read(&sealer, &headers_with(&altered), 1_010, true).is_none());
    }
}
