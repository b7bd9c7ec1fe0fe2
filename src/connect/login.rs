//! The browser login of the `oidc` identity: a connect page without a session sends the
//! browser to the issuer ([`start`]); `GET /login/callback` checks the answer, sets the
//! session cookie and returns to that same connect page, and nowhere else.

use axum::extract::{RawQuery, State};
use axum::http::header::LOCATION;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::{Cookie, CookieJar};

use super::errors::PageError;
use super::pages;
use super::redirect::{CallbackQuery, parse_query};
use super::services::PageServices;
use crate::audit::Audit;
use crate::cookie::{host_cookie, keyed_name};
use crate::identity::oidc::{LoginTransaction, is_return_path};
use crate::identity::{Identity, Oidc, session};
use crate::seal::{CLOCK_LEEWAY_SECS, Purpose, Sealer, constant_time_eq, digest, random_id};
use crate::ui;
use grantry_base::clock::unix_now;

/// How long a browser may take to sign in at the issuer.
const LOGIN_TTL_SECS: i64 = 600;
/// Logins one browser may have under way; past it the older ones are dropped, so a page that
/// sends someone through link after link cannot pile cookies up until requests fail.
const MAX_LOGINS_UNDER_WAY: usize = 3;

/// The cookie holding one login transaction; named after its state so that two logins in
/// one browser (two links opened at once) do not overwrite each other.
fn cookie_name(oauth_state: &str, https: bool) -> String {
    keyed_name(
        "grantry-login",
        "grantry/login-cookie-name/v1",
        oauth_state,
        https,
    )
}

/// Sends the browser to the issuer to sign in, to come back to `return_to`.
pub(super) fn start(
    oidc: &Oidc,
    sealer: &Sealer,
    return_to: &str,
    headers: &HeaderMap,
    https: bool,
) -> Response {
    let (transaction, url) = oidc.begin_login(return_to);
    let sealed = sealer.seal_timed(
        Purpose::LoginTransaction,
        b"",
        &transaction,
        unix_now(),
        LOGIN_TTL_SECS,
    );
    let cookie = host_cookie(
        cookie_name(&transaction.state, https),
        sealed,
        https,
        LOGIN_TTL_SECS,
    );
    let Ok(location) = HeaderValue::from_str(&url) else {
        return pages::message(
            StatusCode::INTERNAL_SERVER_ERROR,
            &ui::t("error-login-misconfigured-title"),
            &ui::t_with(
                "error-login-misconfigured-body",
                &[("brand", &ui::brand().name)],
            ),
        );
    };
    let mut jar = CookieJar::new();
    let under_way: Vec<String> = CookieJar::from_headers(headers)
        .iter()
        .map(|c| c.name().to_owned())
        .filter(|name| name.contains("grantry-login-"))
        .collect();
    if under_way.len() >= MAX_LOGINS_UNDER_WAY {
        for name in under_way {
            jar = jar.add(host_cookie(name, String::new(), https, 0));
        }
    }
    (
        StatusCode::SEE_OTHER,
        jar.add(cookie),
        [(LOCATION, location)],
    )
        .into_response()
}

/// `GET /login/callback`.
pub(super) async fn callback(
    State(state): State<PageServices>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let Identity::Oidc(oidc) = &state.identity else {
        return pages::message(
            StatusCode::NOT_FOUND,
            &ui::t("error-not-found-title"),
            &ui::t("error-not-found-body"),
        );
    };
    let https = state.config.is_https();
    // The same strict reading as the provider callback: one value per name, bounded length.
    let Some(query) = parse_query(raw.as_deref()) else {
        return stale_login();
    };
    let Some(oauth_state) = query.state.as_deref().filter(|s| !s.is_empty()) else {
        return stale_login();
    };
    let name = cookie_name(oauth_state, https);
    let Some(transaction) = transaction(&state, &headers, &name, oauth_state) else {
        Audit::default().alarm(
            "login.state_mismatch",
            "login callback without its transaction cookie",
        );
        return stale_login();
    };
    // Single use: the transaction cookie goes whatever happens next, and the store remembers
    // its state until it expires, so a copy of the cookie cannot redeem a code again.
    let jar = CookieJar::new().add(host_cookie(name, String::new(), https, 0));
    match first_use(&state, oauth_state).await {
        Ok(true) => {}
        Ok(false) => {
            Audit::default().alarm(
                "login.replayed",
                "login callback for a transaction already used",
            );
            return (jar, stale_login()).into_response();
        }
        Err(e) => return (jar, PageError::Store(e)).into_response(),
    }
    match finish(&state, oidc, &transaction, &query).await {
        Ok(cookie) => {
            let location = HeaderValue::from_str(&transaction.return_to)
                .expect("return paths are checked to be plain ASCII");
            let jar = jar.add(cookie);
            (StatusCode::SEE_OTHER, jar, [(LOCATION, location)]).into_response()
        }
        Err(page) => (jar, page).into_response(),
    }
}

/// The login transaction sealed in the cookie `name`, if it is the one `oauth_state` names.
fn transaction(
    state: &PageServices,
    headers: &HeaderMap,
    name: &str,
    oauth_state: &str,
) -> Option<LoginTransaction> {
    let jar = CookieJar::from_headers(headers);
    let transaction: LoginTransaction = state
        .sealer
        .open_timed(
            Purpose::LoginTransaction,
            b"",
            jar.get(name)?.value(),
            unix_now(),
        )
        .ok()?;
    constant_time_eq(&transaction.state, oauth_state).then_some(transaction)
}

/// Records the login transaction `oauth_state` as used, in the store (as a lease that is never
/// given back: it lapses when the transaction would have); false if it was already.
async fn first_use(
    state: &PageServices,
    oauth_state: &str,
) -> Result<bool, crate::store::StoreError> {
    let name = format!(
        "login-used:{}",
        digest("grantry/login-state/v1", &[oauth_state.as_bytes()])
    );
    state
        .leases
        .try_acquire(
            &name,
            &random_id(),
            (LOGIN_TTL_SECS + CLOCK_LEEWAY_SECS) * 1000,
        )
        .await
}

/// Checks the issuer's answer and makes the session cookie.
async fn finish(
    state: &PageServices,
    oidc: &Oidc,
    transaction: &LoginTransaction,
    query: &CallbackQuery,
) -> Result<Cookie<'static>, Response> {
    if !oidc.callback_issuer_ok(query.iss.as_deref()) {
        Audit::default().alarm(
            "login.iss_mismatch",
            "RFC 9207 iss does not match the issuer",
        );
        return Err(not_signed_in(StatusCode::BAD_REQUEST));
    }
    if query.error.is_some() {
        tracing::info!("the issuer did not sign the browser in");
        return Err(not_signed_in(StatusCode::OK));
    }
    if !is_return_path(&transaction.return_to) {
        return Err(stale_login());
    }
    let Some(code) = query.code.as_deref().filter(|c| !c.is_empty()) else {
        return Err(stale_login());
    };
    let principal = oidc.finish_login(transaction, code).await.map_err(|e| {
        tracing::warn!(error = %e, "browser login failed");
        not_signed_in(StatusCode::BAD_GATEWAY)
    })?;
    Audit {
        principal: Some(&principal),
        ..Default::default()
    }
    .notice("login.succeeded", "browser signed in");
    Ok(session::issue(
        &state.sealer,
        &principal,
        unix_now(),
        state.config.is_https(),
    ))
}

fn stale_login() -> Response {
    pages::message(
        StatusCode::BAD_REQUEST,
        &ui::t("error-login-unfinished-title"),
        &ui::t("error-login-unfinished-body"),
    )
}

fn not_signed_in(status: StatusCode) -> Response {
    pages::message(
        status,
        &ui::t("error-not-signed-in-title"),
        &ui::t("error-not-signed-in-body"),
    )
}
