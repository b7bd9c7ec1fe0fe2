//! `GET /connect/{ticket}` (the connect page) and its Continue POST.

use axum::Form;
use axum::extract::{Path, State};
use axum::http::header::LOCATION;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::CookieJar;
use serde::Deserialize;

use super::admission::{admit_browser, admit_form, open_ticket};
use super::errors::PageError;
use super::pages::{self, ConnectPage};
use super::services::PageServices;
use super::ticket::Ticket;
use super::{binding, csrf, key_form};
use crate::audit::Audit;
use crate::flows::{FLOW_TTL_SECS, Flow, FlowStatus};
use crate::identity::Principal;
use crate::providers::oauth;
use crate::seal::{Purpose, random_id};
use grantry_base::clock::unix_now;

pub(super) async fn show(
    State(state): State<PageServices>,
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
    if let Some(form) = provider.key_form() {
        return key_form::form_page(
            &state,
            (&ticket, &sealed),
            &principal,
            (provider, form),
            None,
        );
    }
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
    State(state): State<PageServices>,
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
        client: None,
    }
    .notice("connect.started", "sign-in started");
    crate::metrics::sign_in(&flow.provider, "started");
    let https = state.config.is_https();
    let jar = jar.add(binding::set_cookie(&flow.id, started.binding_value, https));
    (StatusCode::SEE_OTHER, jar, [(LOCATION, started.location)]).into_response()
}

/// A stored sign-in, the browser's binding value and where the browser goes next.
struct Started {
    flow: Flow,
    binding_value: String,
    location: HeaderValue,
}

/// Builds the provider's authorize URL and stores the flow that its callback will claim.
async fn start_flow(
    state: &PageServices,
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
        handout: ticket.handout,
    };
    state.flows.insert(&flow).await?;
    Ok(Started {
        flow,
        binding_value,
        location,
    })
}

/// Past `--max-pending-flows`, the principal's oldest pending sign-ins end.
async fn supersede_older(state: &PageServices, flow: &Flow) {
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
