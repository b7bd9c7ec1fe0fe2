//! The connect page of a provider connected with an API key: a form on grantry's own origin
//! (the key never passes through the MCP client or the model), and its POST to
//! `/connect/{ticket}/key`, which checks the key with the provider before anything is stored.
//! A refused or malformed key shows the form again with why; nothing is stored.

use axum::Form;
use axum::extract::{Path, State};
use axum::http::header::LOCATION;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use secrecy::{ExposeSecret as _, SecretString};
use serde::Deserialize;

use super::errors::PageError;
use super::pages::{self, KeyPage};
use super::services::PageServices;
use super::ticket::Ticket;
use super::{admission, connected, csrf};
use crate::audit::Audit;
use crate::connections::api_key::{ApiKey, KeyError};
use crate::identity::Principal;
use crate::providers::{Account, AccountId, KeyForm, Provider, SiteName};
use crate::ui;
use grantry_base::clock::unix_now;

/// The key form for `ticket`, with `problem` (why the last try stored nothing) if any.
pub(super) fn form_page(
    state: &PageServices,
    (ticket, sealed): (&Ticket, &str),
    principal: &Principal,
    (provider, form): (&Provider, &KeyForm),
    problem: Option<(&str, &str)>,
) -> Response {
    let action = format!("/connect/{sealed}/key");
    let token = csrf::token(&state.sealer, &ticket.id, unix_now());
    let (status, problem, site) = match problem {
        Some((problem, site)) => (StatusCode::BAD_REQUEST, Some(problem), site),
        None => (StatusCode::OK, None, ""),
    };
    pages::render(
        status,
        &KeyPage {
            who: &principal.subject,
            provider_name: &provider.display_name,
            asks_site: form.asks_site(),
            site,
            help_url: form.help_url.as_ref().map(url::Url::as_str),
            problem,
            action: &action,
            csrf: &token,
        },
    )
}

#[derive(Deserialize)]
pub(super) struct KeySubmission {
    csrf: String,
    /// Kept secret from the moment it is read: never printed, wiped when dropped.
    api_key: SecretString,
    #[serde(default)]
    site: String,
}

pub(super) async fn submit(
    State(state): State<PageServices>,
    Path(sealed): Path<String>,
    headers: HeaderMap,
    Form(submitted): Form<KeySubmission>,
) -> Response {
    let (ticket, principal) =
        match admission::admit_form(&state, &sealed, &headers, &submitted.csrf) {
            Ok(admitted) => admitted,
            Err(page) => return *page,
        };
    let Some((provider, form)) = state
        .catalog
        .get(&ticket.provider)
        .and_then(|p| Some((p, p.key_form()?)))
    else {
        return PageError::InvalidLink.into_response();
    };
    // The site typed is shown again only if it is one (never what may be a key pasted there).
    let site = SiteName::parse(submitted.site.trim());
    let again = |problem: &str| {
        let site = site.as_ref().map_or("", SiteName::as_str);
        form_page(
            &state,
            (&ticket, &sealed),
            &principal,
            (provider, form),
            Some((problem, site)),
        )
    };
    let name = [("provider", provider.display_name.as_str())];
    let Ok(account) = site_account(form, &submitted.site) else {
        return again(&ui::t("connect-key-site-malformed"));
    };
    let Some(key) = ApiKey::parse(submitted.api_key.expose_secret()) else {
        return again(&ui::t("connect-key-malformed"));
    };
    let stored = state
        .connections
        .connect_with_key(&principal, provider, key, account.clone(), unix_now())
        .await;
    match stored {
        Ok(()) => {
            state.sign_ins_ended.tell(&principal);
            let ended = connected::Ended {
                provider: &provider.id,
                account: account.as_ref(),
                handout: ticket.handout,
                less: false,
            };
            connected(&state, &principal, ended)
        }
        Err(KeyError::Refused) => {
            crate::metrics::sign_in(&provider.id, "key_refused");
            again(&ui::t_with("connect-key-refused", &name))
        }
        Err(KeyError::Unchecked(e)) => {
            tracing::warn!(provider = %provider.id, error = %e, "an API key could not be checked");
            again(&ui::t_with("connect-key-unchecked", &name))
        }
        Err(KeyError::Store(e)) => PageError::Store(e).into_response(),
    }
}

/// A typed site name that cannot be one.
#[derive(Debug)]
struct BadSite;

/// The account a site name names, where the form asks for one.
fn site_account(form: &KeyForm, typed: &str) -> Result<Option<Account>, BadSite> {
    if !form.asks_site() {
        return Ok(None);
    }
    let site = SiteName::parse(typed.trim()).ok_or(BadSite)?;
    let id = AccountId::given(site.as_str()).ok_or(BadSite)?;
    Ok(Some(Account {
        id,
        name: site.as_str().to_owned(),
    }))
}

/// The key is stored: the same "connected" page as after an OAuth sign-in.
fn connected(state: &PageServices, principal: &Principal, ended: connected::Ended<'_>) -> Response {
    Audit {
        principal: Some(principal),
        provider: Some(ended.provider),
        flow_id: None,
        client: None,
    }
    .notice("grant.stored", "API key checked and stored");
    crate::metrics::sign_in(ended.provider, "completed");
    let location = connected::location(&state.sealer, ended);
    (StatusCode::SEE_OTHER, [(LOCATION, location)]).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_is_a_dns_label_in_lowercase() {
        let form = KeyForm {
            fields: vec![crate::providers::catalog::KeyField::Site],
            help_url: None,
        };
        assert_eq!(
            site_account(&form, " acme-test ").unwrap().unwrap().id,
            "acme-test"
        );
        for bad in [
            "",
            "Acme",
            "-acme",
            "acme-",
            "acme.example",
            "a/b",
            &"a".repeat(64),
        ] {
            assert!(site_account(&form, bad).is_err(), "{bad}");
        }
        assert!(site_account(&KeyForm::default(), "").unwrap().is_none());
    }
}
