//! `GET /connect/{ticket}` (the connect page) and its Continue POST.

use axum::Form;
use axum::extract::{Path, State};
use axum::http::header::LOCATION;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::CookieJar;
use serde::Deserialize;

use super::errors::PageError;
use super::pages::{self, ConnectPage};
use super::ticket::Ticket;
use super::{binding, csrf, login, security_event};
use crate::audit::Audit;
use crate::flows::{FLOW_TTL_SECS, Flow, FlowStatus};
use crate::identity::oidc::is_return_path;
use crate::identity::{Identity, Principal};
use crate::providers::oauth;
use crate::seal::{Purpose, random_id};
use crate::state::AppState;
use crate::ui;
use grantry_base::clock::unix_now;

/// Opens the ticket and checks that the browser's user is its principal. A browser with no
/// session (or one ending before a sign-in could finish) is sent to log in first, and comes
/// back to this same page.
fn admit(
    state: &AppState,
    sealed: &str,
    headers: &HeaderMap,
) -> Result<(Ticket, Principal), Box<Response>> {
    let ticket = open_ticket(state, sealed)?;
    admit_browser(state, ticket, sealed, headers)
}

/// The link's ticket, if it is one of grantry's, unexpired.
fn open_ticket(state: &AppState, sealed: &str) -> Result<Ticket, Box<Response>> {
    Ticket::open(&state.sealer, sealed, unix_now()).map_err(|e| {
        tracing::info!(reason = %e, "connect link refused");
        Box::new(PageError::InvalidLink.into_response())
    })
}

/// Checks that the browser's user is the ticket's principal (sending one without a session
/// to log in first).
fn admit_browser(
    state: &AppState,
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

pub(super) async fn show(
    State(state): State<AppState>,
    Path(sealed): Path<String>,
    headers: HeaderMap,
) -> Response {
    let ticket = match open_ticket(&state, &sealed) {
        Ok(ticket) => ticket,
        Err(page) => return *page,
    };
    // Opened, whoever it turns out to be: the retry of the call that sent it holds on.
    ticket
        .mark_opened(state.leases.as_ref(), state.config.request_state_ttl_secs)
        .await;
    let (ticket, principal) = match admit_browser(&state, ticket, &sealed, &headers) {
        Ok(admitted) => admitted,
        Err(page) => return *page,
    };
    let Some(provider) = state.catalog.get(&ticket.provider) else {
        return PageError::InvalidLink.into_response();
    };
    let scopes = match state
        .connections
        .scopes_to_ask(&principal, provider, ticket.access)
        .await
    {
        Ok(scopes) => scopes,
        Err(e) => return PageError::Store(e).into_response(),
    };
    let action = format!("/connect/{sealed}");
    let token = csrf::token(&state.sealer, &ticket.id, unix_now());
    pages::render(
        StatusCode::OK,
        &ConnectPage {
            who: &principal.subject,
            provider_name: &provider.display_name,
            scopes: &scopes,
            action: &action,
            csrf: &token,
        },
    )
}

#[derive(Deserialize)]
pub(super) struct ContinueForm {
    csrf: String,
}

pub(super) async fn continue_to_provider(
    State(state): State<AppState>,
    Path(sealed): Path<String>,
    headers: HeaderMap,
    jar: CookieJar,
    Form(form): Form<ContinueForm>,
) -> Response {
    let (ticket, principal) = match admit_form(&state, &sealed, &headers, &form.csrf) {
        Ok(admitted) => admitted,
        Err(page) => return *page,
    };
    let started = match start_flow(&state, &ticket, principal).await {
        Ok(started) => started,
        Err(e) => return e.into_response(),
    };
    let flow = &started.flow;
    supersede_older(&state, flow).await;
    Audit {
        principal: Some(&flow.principal),
        provider: Some(&flow.provider),
        flow_id: Some(&flow.id),
    }
    .notice("connect.started", "sign-in started");
    crate::metrics::sign_in(&flow.provider, "started");
    let https = state.config.is_https();
    let jar = jar.add(binding::set_cookie(&flow.id, started.binding_value, https));
    (StatusCode::SEE_OTHER, jar, [(LOCATION, started.location)]).into_response()
}

/// The Continue POST passes the page's checks, comes from grantry's own origin, and carries
/// the form token of its ticket.
fn admit_form(
    state: &AppState,
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

/// A stored sign-in, the browser's binding value and where the browser goes next.
struct Started {
    flow: Flow,
    binding_value: String,
    location: HeaderValue,
}

/// Builds the provider's authorize URL and stores the flow that its callback will claim.
async fn start_flow(
    state: &AppState,
    ticket: &Ticket,
    principal: Principal,
) -> Result<Started, PageError> {
    let provider = state
        .catalog
        .get(&ticket.provider)
        .ok_or(PageError::InvalidLink)?;
    let scopes = state
        .connections
        .scopes_to_ask(&principal, provider, ticket.access)
        .await?;
    let oauth_state = random_id();
    let redirect_uri = state.config.redirect_uri();
    let client = provider.oauth().ok_or(PageError::InvalidLink)?;
    let start = oauth::authorize(client, &scopes, &redirect_uri, &oauth_state).map_err(|e| {
        tracing::error!(provider = %provider.id, error = %e, "cannot build the authorize URL");
        PageError::Misconfigured
    })?;
    // The provider's authorize URL, as a header: a URL that cannot be one is the entry's fault.
    let location = HeaderValue::from_str(&start.url).map_err(|_| {
        tracing::error!(provider = %provider.id, "the authorize URL cannot be a Location header");
        PageError::Misconfigured
    })?;
    let flow_id = random_id();
    let binding_value = random_id();
    let now = unix_now();
    let flow = Flow {
        verifier_sealed: start.pkce_verifier.as_deref().map(|v| {
            state
                .sealer
                .seal_bytes(Purpose::FlowSecret, flow_id.as_bytes(), v.as_bytes())
        }),
        id: flow_id,
        ticket_id: ticket.id.clone(),
        principal,
        provider: provider.id.clone(),
        state_hash: crate::flows::oauth_state_hash(&oauth_state),
        binding_hash: binding::value_hash(&binding_value),
        status: FlowStatus::Pending,
        created_at: now,
        expires_at: now + FLOW_TTL_SECS,
        claimed_at: None,
        scopes,
    };
    state.flows.insert(&flow).await?;
    Ok(Started {
        flow,
        binding_value,
        location,
    })
}

/// Past `--max-pending-flows`, the principal's oldest pending sign-ins end.
async fn supersede_older(state: &AppState, flow: &Flow) {
    let keep = state.config.limits.max_pending_flows;
    match state.flows.supersede_pending(&flow.principal, keep).await {
        Ok(0) => {}
        Ok(n) => Audit {
            principal: Some(&flow.principal),
            ..Default::default()
        }
        .notice(
            "connect.superseded",
            &format!("{n} older pending sign-in(s) superseded"),
        ),
        // The new flow stands; the cap is enforced again on the next Continue.
        Err(e) => tracing::warn!(error = %e, "older pending sign-ins not superseded"),
    }
}

pub(super) fn forbidden_form() -> Response {
    pages::message(
        StatusCode::FORBIDDEN,
        &ui::t("error-bad-form-title"),
        &ui::t("error-bad-form-body"),
    )
}
