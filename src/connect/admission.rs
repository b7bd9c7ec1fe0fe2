//! Who may use a connect link: the ticket is one of grantry's and unexpired, the browser's
//! user is the one it was issued to (one without a session logs in first), and a POST comes
//! from grantry's own origin with the form token of its ticket. The connect page, its
//! Continue and the key form all go through here.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::errors::PageError;
use super::pages;
use super::services::PageServices;
use super::ticket::Ticket;
use super::{csrf, login, security_event};
use crate::flows::FLOW_TTL_SECS;
use crate::identity::oidc::is_return_path;
use crate::identity::{Identity, Principal};
use crate::ui;
use grantry_base::clock::unix_now;

/// Opens the ticket and checks that the browser's user is its principal. A browser with no
/// session (or one ending before a sign-in could finish) is sent to log in first, and comes
/// back to this same page.
pub(super) fn admit(
    state: &PageServices,
    sealed: &str,
    headers: &HeaderMap,
) -> Result<(Ticket, Principal), Box<Response>> {
    let ticket = open_ticket(state, sealed)?;
    admit_browser(state, ticket, sealed, headers)
}

/// The link's ticket, if it is one of grantry's, unexpired.
pub(super) fn open_ticket(state: &PageServices, sealed: &str) -> Result<Ticket, Box<Response>> {
    Ticket::open(&state.sealer, sealed, unix_now()).map_err(|e| {
        tracing::info!(reason = %e, "connect link refused");
        Box::new(PageError::InvalidLink.into_response())
    })
}

/// Checks that the browser's user is the ticket's principal (sending one without a session
/// to log in first).
pub(super) fn admit_browser(
    state: &PageServices,
    ticket: Ticket,
    sealed: &str,
    headers: &HeaderMap,
) -> Result<(Ticket, Principal), Box<Response>> {
    let https = state.config.is_https();
    let browser = state
        .identity
        .browser_principal(&state.sealer, headers, https, FLOW_TTL_SECS);
    let Some(browser) = browser else {
        let return_to = format!("/connect/{sealed}");
        return Err(Box::new(match &state.identity {
            Identity::Oidc(oidc) if is_return_path(&return_to) => {
                login::start(oidc, &state.sealer, &return_to, headers, https)
            }
            _ => PageError::InvalidLink.into_response(),
        }));
    };
    if browser != ticket.principal {
        security_event(
            "connect.identity_mismatch",
            Some(&browser),
            &format!("link issued to principal {}", ticket.principal.tag()),
        );
        return Err(Box::new(pages::message(
            StatusCode::FORBIDDEN,
            &ui::t("error-link-of-another-title"),
            &ui::t("error-link-of-another-body"),
        )));
    }
    Ok((ticket, browser))
}

/// The Continue (or key form's) POST passes the page's checks, comes from grantry's own
/// origin, and carries the form token of its ticket.
pub(super) fn admit_form(
    state: &PageServices,
    sealed: &str,
    headers: &HeaderMap,
    form_token: &str,
) -> Result<(Ticket, Principal), Box<Response>> {
    if !csrf::same_origin(headers, &state.config.public_url.origin()) {
        security_event(
            "connect.cross_site_post",
            None,
            "cross-site Continue refused",
        );
        return Err(Box::new(forbidden_form()));
    }
    let (ticket, principal) = admit(state, sealed, headers)?;
    if csrf::check_token(&state.sealer, &ticket.id, form_token, unix_now()).is_err() {
        security_event(
            "connect.bad_csrf",
            Some(&principal),
            "Continue without a valid form token",
        );
        return Err(Box::new(forbidden_form()));
    }
    Ok((ticket, principal))
}

pub(super) fn forbidden_form() -> Response {
    pages::message(
        StatusCode::FORBIDDEN,
        &ui::t("error-bad-form-title"),
        &ui::t("error-bad-form-body"),
    )
}
