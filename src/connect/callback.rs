//! `GET /oauth/callback`: the provider sends the browser back here with a code (or an error).
//!
//! Order matters. The flow is claimed first, atomically and once, so a replayed or doubled
//! callback never reaches the token endpoint. Then the browser binding, the user, RFC 9207
//! `iss` and `error=` are checked, all before the one and only token request. The grant is
//! written (and acknowledged by the store) before the page says "connected".

use axum::extract::{RawQuery, State};
use axum::http::header::LOCATION;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::CookieJar;

use super::errors::PageError;
use super::redirect::{CallbackQuery, parse_query};
use super::services::PageServices;
use super::{account, binding, connected};
use crate::audit::Audit;
use crate::flows::{self, Claim, Flow, FlowStatus};
use crate::providers::{Account, OAuthClient, Provider, adapters, oauth, revocation};
use crate::seal::Purpose;
use crate::store::StoreError;
use grantry_base::clock::unix_now;

pub(super) async fn handle(
    State(state): State<PageServices>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    jar: CookieJar,
) -> Response {
    let query = match parse_query(raw.as_deref()) {
        Some(query) if query.state.as_deref().is_some_and(|s| !s.is_empty()) => query,
        _ => return PageError::InvalidResponse.into_response(),
    };
    let oauth_state = query.state.as_deref().unwrap_or_default();
    let claimed = state
        .flows
        .claim(&flows::oauth_state_hash(oauth_state), unix_now())
        .await;
    let flow = match claimed {
        Ok(Claim::Claimed(flow)) => flow,
        Ok(Claim::Unknown) => return PageError::InvalidResponse.into_response(),
        Ok(Claim::Expired) => return PageError::Expired.into_response(),
        Ok(Claim::AlreadyUsed(flow)) => {
            return super::replay::already_used(&state, &flow, &headers).await;
        }
        Err(e) => return PageError::Store(e).into_response(),
    };
    // Once claimed, the flow is seen through even if the browser goes away: a redeemed code
    // whose tokens were dropped half-way would be lost for good.
    let https = state.config.is_https();
    let completion =
        crate::telemetry::context::carried(complete_claimed(state.clone(), *flow, query, headers));
    match tokio::spawn(completion).await {
        Ok(Ok((flow, signed_in))) => {
            let jar = jar.add(binding::removal(&flow.id, https));
            let ended = connected::Ended {
                provider: &flow.provider,
                account: signed_in.account.as_ref(),
                handout: flow.handout,
                less: signed_in.granted == Granted::LessThanAsked,
            };
            let location = connected::location(&state.sealer, ended);
            (StatusCode::SEE_OTHER, jar, [(LOCATION, location)]).into_response()
        }
        Ok(Err(error)) => error.into_response(),
        Err(e) => {
            PageError::Store(StoreError::Unavailable(format!("callback task: {e}"))).into_response()
        }
    }
}

/// What a sign-in that stored its grant got: its account, and whether every scope asked.
struct SignedIn {
    granted: Granted,
    account: Option<Account>,
}

/// Whether the provider granted every scope the sign-in asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Granted {
    AllAsked,
    /// Fewer (the person unticked one): the connection is stored as granted, and the page
    /// says what cannot be done with it.
    LessThanAsked,
}

/// Finishes a claimed flow and records how it ended, with its count and, for what may be an
/// attack, its security event.
async fn complete_claimed(
    state: PageServices,
    flow: Flow,
    query: CallbackQuery,
    headers: HeaderMap,
) -> Result<(Flow, SignedIn), PageError> {
    let outcome = finish(&state, &flow, &query, &headers).await;
    let status = match &outcome {
        Ok(_) => FlowStatus::Connected,
        Err(error) => error.flow_status(),
    };
    let audit = Audit {
        principal: Some(&flow.principal),
        provider: Some(&flow.provider),
        flow_id: Some(&flow.id),
        client: None,
    };
    match &outcome {
        Ok(_) => audit.notice("grant.stored", "grant stored"),
        Err(error) => match error.alarm() {
            Some((event, detail)) => audit.alarm(event, detail),
            None => tracing::info!(provider = %flow.provider, %error, "sign-in not completed"),
        },
    }
    let counted = match status {
        FlowStatus::Connected => "completed",
        FlowStatus::Denied => "declined",
        _ => "failed",
    };
    crate::metrics::sign_in(&flow.provider, counted);
    if let Err(e) = state.flows.finish(&flow.id, status).await {
        tracing::warn!(error = %e, status = status.as_str(), "cannot record how the flow ended");
    }
    state.sign_ins_ended.tell(&flow.principal);
    outcome.map(|signed_in| (flow, signed_in))
}

/// Everything after the claim, in order, each check before the one and only token request.
async fn finish(
    state: &PageServices,
    flow: &Flow,
    query: &CallbackQuery,
    headers: &HeaderMap,
) -> Result<SignedIn, PageError> {
    check_browser(state, flow, headers)?;
    let provider = state.catalog.get(&flow.provider).ok_or_else(|| {
        tracing::error!(provider = %flow.provider, "flow names a provider no longer in the catalog");
        PageError::InvalidResponse
    })?;
    // A provider connected with an API key has no callback: its flows never come here.
    let oauth = provider.oauth().ok_or(PageError::InvalidResponse)?;
    check_answer(provider, oauth, query)?;
    let code = query
        .code
        .as_deref()
        .filter(|c| !c.is_empty())
        .ok_or(PageError::InvalidResponse)?;
    let verifier = verifier(state, flow)?;
    // A flow from before flows kept their scopes asked for what a reading sign-in asks.
    let requested = if flow.scopes.is_empty() {
        provider.scopes_for(crate::access::Access::Read)
    } else {
        flow.scopes.clone()
    };
    let hints = adapters::CallbackHints {
        realm_id: query.realm_id.clone(),
        accounts_server: query.accounts_server.clone(),
    };
    adapters::check_callback(provider, &hints).map_err(PageError::Account)?;
    let mut tokens = oauth::exchange_code(
        &state.http,
        oauth,
        &state.config.redirect_uri(),
        code,
        verifier.as_deref(),
        &requested,
    )
    .await
    .map_err(|e| {
        tracing::warn!(provider = %provider.id, error = %e, "code exchange failed");
        PageError::ExchangeFailed
    })?;
    tokens.account = account::pick_account(state, provider, &tokens, &hints)
        .await
        .inspect_err(|_| {
            // Redeemed but unusable: the tokens must not stay alive at the provider.
            revocation::revoke_in_background(&state.http, provider, &tokens);
        })?;
    state
        .connections
        .store_signed_in(&flow.principal, provider, &tokens, unix_now())
        .await?;
    // Only an entry asking per level knows its scopes' names well enough to tell (Zoho, say,
    // names them otherwise in its answer).
    let lacking = provider.lacking(&requested, &tokens.scopes);
    let granted = if lacking.is_empty() || !provider.asks_per_access() {
        Granted::AllAsked
    } else {
        tracing::info!(provider = %provider.id, lacking = %lacking.join(" "), "the provider granted fewer scopes than asked");
        Granted::LessThanAsked
    };
    Ok(SignedIn {
        granted,
        account: tokens.account.take(),
    })
}

/// What the redirect says before anything is redeemed: RFC 9207 `iss`, then `error=`.
fn check_answer(
    provider: &Provider,
    oauth: &OAuthClient,
    query: &CallbackQuery,
) -> Result<(), PageError> {
    if !issuer_ok(provider, oauth, query.iss.as_deref()) {
        return Err(PageError::IssMismatch);
    }
    if let Some(error) = &query.error {
        tracing::info!(provider = %provider.id, error = %error.chars().take(64).collect::<String>(), "provider returned an error");
        return Err(PageError::NotCompleted {
            denied: error == "access_denied",
        });
    }
    Ok(())
}

/// The browser must be the one that started the sign-in (its binding cookie), signed in as
/// the sign-in's user.
fn check_browser(state: &PageServices, flow: &Flow, headers: &HeaderMap) -> Result<(), PageError> {
    let https = state.config.is_https();
    if !binding::matches(headers, &flow.id, https, &flow.binding_hash) {
        return Err(PageError::OtherBrowser);
    }
    let browser = state
        .identity
        .browser_principal(&state.sealer, headers, https, 0);
    if browser.as_ref() != Some(&flow.principal) {
        return Err(PageError::OtherUser);
    }
    Ok(())
}

/// The flow's PKCE verifier, opened (none for a provider without PKCE).
fn verifier(state: &PageServices, flow: &Flow) -> Result<Option<String>, PageError> {
    let Some(sealed) = &flow.verifier_sealed else {
        return Ok(None);
    };
    let bytes = state
        .sealer
        .open_bytes(Purpose::FlowSecret, flow.id.as_bytes(), sealed)
        .map_err(|e| {
            tracing::error!(error = %e, "the flow's PKCE verifier does not open");
            PageError::InvalidResponse
        })?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| PageError::InvalidResponse)
}

/// RFC 9207: an `iss` that is sent must equal the recorded issuer byte for byte; a provider
/// known to always send it must have sent it. An `iss` that cannot be checked (no issuer in
/// the catalog) is refused too: with one redirect URI for every provider, `iss` is what tells
/// a mixed-up response apart.
fn issuer_ok(provider: &Provider, oauth: &OAuthClient, iss: Option<&str>) -> bool {
    match (iss, oauth.issuer.as_deref()) {
        (Some(got), Some(expected)) => got == expected,
        (Some(_), None) => {
            tracing::warn!(provider = %provider.id, "callback carries `iss` but the catalog names no issuer for this provider; set `issuer`");
            false
        }
        (None, _) => !oauth.iss_parameter_supported,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Catalog;

    #[test]
    fn rfc_9207_iss_table() {
        let p = Catalog::load(Some("http://127.0.0.1:8080/demo"), None, &[])
            .unwrap()
            .default_provider()
            .clone();
        let mut o = p.oauth().unwrap().clone();
        assert!(issuer_ok(&p, &o, Some("http://127.0.0.1:8080/demo")));
        assert!(
            !issuer_ok(&p, &o, Some("http://127.0.0.1:8080/demo/")),
            "byte for byte"
        );
        assert!(!issuer_ok(&p, &o, Some("HTTP://127.0.0.1:8080/demo")));
        assert!(!issuer_ok(&p, &o, None), "advertised but absent");
        o.iss_parameter_supported = false;
        assert!(issuer_ok(&p, &o, None), "neither advertised nor sent");
        o.issuer = None;
        assert!(
            !issuer_ok(&p, &o, Some("http://anything")),
            "an iss that cannot be checked"
        );
    }
}
