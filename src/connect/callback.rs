//! `GET /oauth/callback`: the provider sends the browser back here with a code (or an error).
//!
//! Order matters. The flow is claimed first, atomically and once, so a replayed or doubled
//! callback never reaches the token endpoint. Then the browser binding, the user, RFC 9207
//! `iss` and `error=` are checked, all before the one and only token request. The grant is
//! written (and acknowledged by the store) before the page says "connected".

use axum::extract::{Query, RawQuery, State};
use axum::http::header::LOCATION;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::CookieJar;
use serde::Deserialize;

use super::redirect::{CallbackQuery, parse_query};
use super::{account, binding, pages, security_event};
use crate::clock::unix_now;
use crate::flows::{self, Claim, Flow, FlowStatus};
use crate::grants::GrantKey;
use crate::providers::{Provider, adapters, oauth, revocation};
use crate::seal::Purpose;
use crate::state::AppState;

pub async fn handle(
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    jar: CookieJar,
) -> Response {
    let Some(query) = parse_query(raw.as_deref()) else {
        return invalid_response();
    };
    let Some(oauth_state) = query.state.as_deref().filter(|s| !s.is_empty()) else {
        return invalid_response();
    };
    let flow = match state
        .flows
        .claim(&flows::oauth_state_hash(oauth_state), unix_now())
        .await
    {
        Ok(Claim::Claimed(flow)) => flow,
        Ok(Claim::Unknown) => return invalid_response(),
        Ok(Claim::Expired) => {
            return pages::message(
                StatusCode::BAD_REQUEST,
                "This sign-in expired",
                "It took too long to come back from the provider. Ask your assistant again for a new link.",
            );
        }
        Ok(Claim::AlreadyUsed(flow)) => {
            return super::replay::already_used(&state, &flow, &headers).await;
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot claim the flow");
            return pages::store_unavailable();
        }
    };
    // Once claimed, the flow is seen through even if the browser goes away: a redeemed code
    // whose tokens were dropped half-way would be lost for good.
    let https = state.config.is_https();
    match tokio::spawn(complete_claimed(state, *flow, query, headers)).await {
        Ok(Ok(flow)) => {
            let jar = jar.add(binding::removal(&flow.id, https));
            let location = format!("/connected?provider={}", flow.provider);
            let location =
                HeaderValue::from_str(&location).unwrap_or(HeaderValue::from_static("/connected"));
            (StatusCode::SEE_OTHER, jar, [(LOCATION, location)]).into_response()
        }
        Ok(Err(page)) => *page,
        Err(e) => {
            tracing::error!(error = %e, "the callback task failed");
            pages::store_unavailable()
        }
    }
}

/// Finishes a claimed flow and records how it ended: the flow when connected, else the page.
async fn complete_claimed(
    state: AppState,
    flow: Flow,
    query: CallbackQuery,
    headers: HeaderMap,
) -> Result<Flow, Box<Response>> {
    let (status, outcome) = match finish(&state, &flow, &query, &headers).await {
        Ok(()) => (FlowStatus::Connected, Ok(())),
        Err((status, page)) => (status, Err(Box::new(page))),
    };
    let counted = match status {
        FlowStatus::Connected => "completed",
        FlowStatus::Denied => "declined",
        _ => "failed",
    };
    crate::metrics::sign_in(&flow.provider, counted);
    if let Err(e) = state.flows.finish(&flow.id, status).await {
        tracing::warn!(error = %e, status = status.as_str(), "cannot record how the flow ended");
    }
    outcome.map(|()| flow)
}

/// Everything after the claim. An error carries the flow's final status and the page.
async fn finish(
    state: &AppState,
    flow: &Flow,
    query: &CallbackQuery,
    headers: &HeaderMap,
) -> Result<(), (FlowStatus, Response)> {
    let failed = |page| (FlowStatus::Failed, page);
    let https = state.config.is_https();
    if !binding::matches(headers, &flow.id, https, &flow.binding_hash) {
        security_event(
            "callback.binding_mismatch",
            Some(&flow.principal),
            "callback reached a browser that did not start this sign-in",
        );
        return Err(failed(pages::message(
            StatusCode::FORBIDDEN,
            "This sign-in was started in another browser",
            "For your safety it was stopped. Open the link your assistant gave you in this browser.",
        )));
    }
    let browser =
        state
            .identity
            .browser_principal(&state.sealer, headers, https, unix_now(), unix_now());
    if browser.as_ref() != Some(&flow.principal) {
        security_event(
            "callback.identity_mismatch",
            Some(&flow.principal),
            "callback by another user",
        );
        return Err(failed(pages::message(
            StatusCode::FORBIDDEN,
            "This sign-in belongs to someone else",
            "For your safety it was stopped.",
        )));
    }
    let Some(provider) = state.catalog.get(&flow.provider) else {
        tracing::error!(provider = %flow.provider, "flow names a provider no longer in the catalog");
        return Err(failed(invalid_response()));
    };
    if !issuer_ok(provider, query.iss.as_deref()) {
        security_event(
            "callback.iss_mismatch",
            Some(&flow.principal),
            "RFC 9207 iss does not match",
        );
        return Err(failed(invalid_response()));
    }
    if let Some(error) = &query.error {
        tracing::info!(provider = %provider.id, error = %error.chars().take(64).collect::<String>(), "provider returned an error");
        let status = if error == "access_denied" {
            FlowStatus::Denied
        } else {
            FlowStatus::Failed
        };
        return Err((
            status,
            pages::message(
                StatusCode::OK,
                "Account not connected",
                "The sign-in was not completed, so nothing was connected. You can close this page.",
            ),
        ));
    }
    let Some(code) = query.code.as_deref().filter(|c| !c.is_empty()) else {
        return Err(failed(invalid_response()));
    };
    let verifier = match &flow.verifier_sealed {
        Some(sealed) => {
            match state
                .sealer
                .open_bytes(Purpose::FlowSecret, flow.id.as_bytes(), sealed)
            {
                Ok(bytes) => {
                    Some(String::from_utf8(bytes).map_err(|_| failed(invalid_response()))?)
                }
                Err(e) => {
                    tracing::error!(error = %e, "the flow's PKCE verifier does not open");
                    return Err(failed(invalid_response()));
                }
            }
        }
        None => None,
    };
    let hints = adapters::CallbackHints {
        realm_id: query.realm_id.clone(),
        accounts_server: query.accounts_server.clone(),
    };
    adapters::check_callback(provider, &hints).map_err(|e| failed(account::account_page(&e)))?;
    let mut tokens = oauth::exchange_code(
        &state.http,
        provider,
        &state.config.redirect_uri(),
        code,
        verifier.as_deref(),
    )
    .await
    .map_err(|e| {
        tracing::warn!(provider = %provider.id, error = %e, "code exchange failed");
        failed(pages::message(
            StatusCode::BAD_GATEWAY,
            "The account could not be connected",
            "The provider did not complete the sign-in. Ask your assistant again to start over.",
        ))
    })?;
    tokens.account = match account::pick_account(state, provider, &tokens, &hints).await {
        Ok(account) => account,
        Err(page) => {
            // Redeemed but unusable: the tokens must not stay alive at the provider.
            revocation::revoke_in_background(&state.http, provider, &tokens);
            return Err(failed(page));
        }
    };
    let key = GrantKey {
        principal: flow.principal.clone(),
        provider: provider.id.clone(),
    };
    state
        .grants
        .store_new(&key, &tokens, unix_now())
        .await
        .map_err(|e| {
            tracing::error!(error = %e, "cannot store the grant");
            failed(pages::store_unavailable())
        })?;
    crate::audit::Audit {
        principal: Some(&flow.principal),
        provider: Some(&provider.id),
        flow_id: Some(&flow.id),
    }
    .notice("grant.stored", "grant stored");
    Ok(())
}

/// RFC 9207: an `iss` that is sent must equal the recorded issuer byte for byte; a provider
/// known to always send it must have sent it. An `iss` that cannot be checked (no issuer in
/// the catalog) is refused too: with one redirect URI for every provider, `iss` is what tells
/// a mixed-up response apart.
fn issuer_ok(provider: &Provider, iss: Option<&str>) -> bool {
    match (iss, provider.issuer.as_deref()) {
        (Some(got), Some(expected)) => got == expected,
        (Some(_), None) => {
            tracing::warn!(provider = %provider.id, "callback carries `iss` but the catalog names no issuer for this provider; set `issuer`");
            false
        }
        (None, _) => !provider.iss_parameter_supported,
    }
}

fn invalid_response() -> Response {
    pages::message(
        StatusCode::BAD_REQUEST,
        "This sign-in response is not valid",
        "Nothing was connected. Ask your assistant again for a new link.",
    )
}

#[derive(Deserialize)]
pub struct ConnectedQuery {
    provider: Option<String>,
}

/// The clean page the callback redirects to (its URL carries no code or state).
pub async fn connected(State(state): State<AppState>, Query(q): Query<ConnectedQuery>) -> Response {
    let name = q
        .provider
        .as_deref()
        .and_then(|id| state.catalog.get(id))
        .map(|p| p.display_name.as_str())
        .unwrap_or("billing");
    let message = format!(
        "Your {name} account is connected. Return to your assistant: it will continue on its own."
    );
    pages::message(StatusCode::OK, "Account connected", &message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Catalog;

    #[test]
    fn rfc_9207_iss_table() {
        let mut p = Catalog::load(Some("http://127.0.0.1:8080/demo"), None, &[])
            .unwrap()
            .default_provider()
            .clone();
        assert!(issuer_ok(&p, Some("http://127.0.0.1:8080/demo")));
        assert!(
            !issuer_ok(&p, Some("http://127.0.0.1:8080/demo/")),
            "byte for byte"
        );
        assert!(!issuer_ok(&p, Some("HTTP://127.0.0.1:8080/demo")));
        assert!(!issuer_ok(&p, None), "advertised but absent");
        p.iss_parameter_supported = false;
        assert!(issuer_ok(&p, None), "neither advertised nor sent");
        p.issuer = None;
        assert!(
            !issuer_ok(&p, Some("http://anything")),
            "an iss that cannot be checked"
        );
    }
}
