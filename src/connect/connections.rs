//! `/connections`: the signed-in person's connections, each with its account, access, health
//! and dates, a Reconnect link and a Disconnect that asks first.
//!
//! Only the person's own connections are ever shown or touched: the page reads the browser's
//! principal (the `dev` user, or the `oidc` browser login, which it starts when there is no
//! session) and finds a connection by id among that principal's alone. Disconnect is a
//! confirmation page, then a POST from grantry's own origin with a form token bound to the
//! principal; it removes and revokes as `disconnect_account` does, and says what the provider
//! answered.

use axum::Form;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::pages::{self, ConfirmDisconnectPage, ConnectLink, ConnectionRow, ConnectionsPage};
use super::services::PageServices;
use super::ticket::Ticket;
use super::{csrf, login, security_event};
use crate::connections::{Connection, EndedBy};
use crate::flows::Handout;
use crate::grants::{Grant, State as Health};
use crate::identity::oidc::CONNECTIONS_PATH;
use crate::identity::{Identity, McpClient, Principal};
use crate::providers::Provider;
use crate::ui;
use grantry_base::clock::unix_now;

/// What a form token of this page is bound to: the person, so a token is no use to another.
fn form_binding(principal: &Principal) -> String {
    format!("connections/{}", principal.tag())
}

/// The browser's person; without one, the `oidc` login (back to this page after it).
fn person(state: &PageServices, headers: &HeaderMap) -> Result<Principal, Box<Response>> {
    let https = state.config.is_https();
    if let Some(principal) = state
        .identity
        .browser_principal(&state.sealer, headers, https, 0)
    {
        return Ok(principal);
    }
    Err(Box::new(match &state.identity {
        Identity::Oidc(oidc) => login::start(oidc, &state.sealer, CONNECTIONS_PATH, headers, https),
        Identity::Dev => super::errors::PageError::InvalidLink.into_response(),
    }))
}

pub(super) async fn show(State(state): State<PageServices>, headers: HeaderMap) -> Response {
    match person(&state, &headers) {
        Ok(principal) => list(&state, &principal, None).await,
        Err(page) => *page,
    }
}

/// The page, with `notice` (what a disconnect did) above the list.
async fn list(state: &PageServices, principal: &Principal, notice: Option<&str>) -> Response {
    let connected = match state.connections.connected(principal).await {
        Ok(connected) => connected,
        Err(e) => return super::errors::PageError::from(e).into_response(),
    };
    let now = unix_now();
    let connect = connect_links(state, principal, &connected, now);
    let mut rows: Vec<ConnectionRow> = Vec::with_capacity(connected.len());
    for c in connected {
        let used_by = used_by(state, c.grant.used_by.as_ref()).await;
        rows.push(ConnectionRow {
            used_by,
            ..row(state, principal, c.provider, c.grant, now)
        });
    }
    pages::render(
        StatusCode::OK,
        &ConnectionsPage {
            who: &principal.subject,
            notice,
            connections: &rows,
            connect: &connect,
        },
    )
}

/// A link to start a new connection at each provider where one can be added: those with
/// accounts (another one), and those not connected yet.
fn connect_links(
    state: &PageServices,
    principal: &Principal,
    connected: &[Connection<'_>],
    now: i64,
) -> Vec<ConnectLink> {
    state
        .catalog
        .all()
        .filter_map(|provider| {
            let another = connected.iter().any(|c| c.provider.id == provider.id);
            (provider.adapter.has_accounts() || !another).then(|| ConnectLink {
                provider_name: provider.display_name.clone(),
                another,
                href: sign_in_link(state, principal, provider, now),
            })
        })
        .collect()
}

/// A fresh sign-in link for `principal` at `provider`.
fn sign_in_link(
    state: &PageServices,
    principal: &Principal,
    provider: &Provider,
    now: i64,
) -> String {
    let ticket = Ticket::new(principal, &provider.id, Handout::ConnectionsPage).seal(
        &state.sealer,
        now,
        state.config.request_state_ttl_secs,
    );
    super::ticket::link(&state.config.public_url, &ticket)
}

/// One connection as the page shows it; its Reconnect link is a fresh sign-in ticket.
fn row(
    state: &PageServices,
    principal: &Principal,
    provider: &Provider,
    grant: Grant,
    now: i64,
) -> ConnectionRow {
    let when = |at: i64| (at > 0).then(|| ui::moment(at));
    let health = health(provider, &grant);
    ConnectionRow {
        provider_name: provider.display_name.clone(),
        name: name(provider, grant.tokens.account.as_ref()),
        account: grant.tokens.account.map(|a| a.name),
        scopes: grant.tokens.scopes,
        healthy: grant.state == Health::Active,
        broken: grant.state == Health::NeedsReauth,
        health,
        connected_since: ui::moment(grant.created_at),
        last_used: when(grant.used_at),
        used_by: None,
        expires_at: grant.health.hard_expires_at.map(ui::moment),
        reconnect: sign_in_link(state, principal, provider, now),
        disconnect: format!("{CONNECTIONS_PATH}/{}/disconnect", grant.connection_id),
    }
}

/// The client a connection was last used through, in the reader's words: a name only the
/// client gave is marked so, a client the operator blocked too.
async fn used_by(state: &PageServices, client: Option<&McpClient>) -> Option<String> {
    let client = client?;
    let name = [("client", client.name())];
    if !client.is_verified() {
        return Some(ui::t_with("connections-client-declared", &name));
    }
    match state.blocklist.is_blocked(client.name()).await {
        Ok(true) => Some(ui::t_with("connections-client-blocked", &name)),
        Ok(false) => Some(client.name().to_owned()),
        Err(e) => {
            tracing::warn!(error = %e, "the blocklist could not be read for the connections page");
            Some(client.name().to_owned())
        }
    }
}

/// How the connection works, in the reader's words.
fn health(provider: &Provider, grant: &Grant) -> String {
    let name = provider.display_name.as_str();
    let brand = ui::brand();
    match grant.state {
        Health::Active => ui::t("connections-working"),
        Health::RefreshFailing => ui::t_with(
            "connections-refresh-failing",
            &[("provider", name), ("brand", &brand.name)],
        ),
        Health::NeedsReauth => {
            let why = grant
                .health
                .reason
                .as_deref()
                .and_then(crate::grants::ReauthReason::parse)
                .map_or_else(
                    || {
                        ui::t_with(
                            "connections-no-longer-accepted",
                            &[("provider", name), ("brand", &brand.name)],
                        )
                    },
                    |r| r.explained(ui::reader().lang, &brand.name, name),
                );
            ui::t_with("connections-needs-reauth", &[("why", &why)])
        }
    }
}

/// The provider's name, with the account in brackets where there is one.
fn name(provider: &Provider, account: Option<&crate::providers::Account>) -> String {
    match account {
        Some(account) => format!("{} ({})", provider.display_name, account.name),
        None => provider.display_name.clone(),
    }
}

/// The person's connection with this id; `None` for anyone else's.
async fn find<'a>(
    state: &'a PageServices,
    principal: &Principal,
    id: &str,
) -> Result<Option<Connection<'a>>, Response> {
    let connected = state
        .connections
        .connected(principal)
        .await
        .map_err(|e| super::errors::PageError::from(e).into_response())?;
    Ok(connected.into_iter().find(|c| c.grant.connection_id == *id))
}

fn no_such_connection() -> Response {
    pages::message(
        StatusCode::NOT_FOUND,
        &ui::t("connections-no-such-title"),
        &ui::t("connections-no-such-body"),
    )
}

/// `GET /connections/{id}/disconnect`: asks first. Changes nothing.
pub(super) async fn confirm(
    State(state): State<PageServices>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response {
    let principal = match person(&state, &headers) {
        Ok(principal) => principal,
        Err(page) => return *page,
    };
    let Connection {
        provider, grant, ..
    } = match find(&state, &principal, &id).await {
        Ok(Some(found)) => found,
        Ok(None) => return no_such_connection(),
        Err(page) => return page,
    };
    let token = csrf::token(&state.sealer, &form_binding(&principal), unix_now());
    pages::render(
        StatusCode::OK,
        &ConfirmDisconnectPage {
            provider_name: &provider.display_name,
            explained: if provider.key_form().is_some() {
                "disconnect-key-explained"
            } else {
                "disconnect-explained"
            },
            name: &name(provider, grant.tokens.account.as_ref()),
            action: &format!("{CONNECTIONS_PATH}/{id}/disconnect"),
            csrf: &token,
            connected_at: grant.signed_in_at(),
        },
    )
}

#[derive(Deserialize)]
pub(super) struct DisconnectForm {
    /// Missing is refused as a bad token (403), like an empty or forged one.
    #[serde(default)]
    csrf: String,
    /// When the confirmed connection was signed in: a reconnection since is another one.
    connected_at: i64,
}

/// `POST /connections/{id}/disconnect`: from our origin, with the person's form token, for
/// one of the person's own connections; then removes and revokes it.
pub(super) async fn disconnect_confirmed(
    State(state): State<PageServices>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(form): Form<DisconnectForm>,
) -> Response {
    if !csrf::same_origin(&headers, &state.config.public_url.origin()) {
        security_event(
            "connections.cross_site_post",
            None,
            "cross-site disconnect refused",
        );
        return super::admission::forbidden_form();
    }
    let principal = match person(&state, &headers) {
        Ok(principal) => principal,
        Err(page) => return *page,
    };
    let binding = form_binding(&principal);
    if csrf::check_token(&state.sealer, &binding, &form.csrf, unix_now()).is_err() {
        security_event(
            "connections.bad_csrf",
            Some(&principal),
            "disconnect without a valid form token",
        );
        return super::admission::forbidden_form();
    }
    let Connection { provider, key, .. } = match find(&state, &principal, &id).await {
        Ok(Some(found)) => found,
        Ok(None) => return no_such_connection(),
        Err(page) => return page,
    };
    match state
        .connections
        .disconnect(&key, provider, form.connected_at, EndedBy::Person)
        .await
    {
        Ok(done) => {
            list(
                &state,
                &principal,
                Some(&done.message(
                    ui::reader().lang,
                    &state.config.brand.name,
                    &provider.display_name,
                )),
            )
            .await
        }
        Err(e) => super::errors::PageError::from(e).into_response(),
    }
}
