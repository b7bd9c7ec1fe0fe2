//! `GET /connected`: the clean page a finished sign-in lands on (its URL carries no code or
//! state). It names the account connected and says what the person does next, which depends
//! on how the connect link reached them: a client whose call waits goes on by itself; a link
//! passed on in words needs the person to ask again; the connect card offers Continue.
//!
//! What it says comes sealed in its URL (purpose "connected page", bound to the provider, for
//! ten minutes): a crafted URL cannot make grantry's page name an account or a next step.
//! Whoever holds that URL (a proxy's log of full URLs, a shared history) reads the account's
//! name for those minutes, and nothing else. Without it (an old link, a reload later) the page
//! says only what is always true.

use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde::{Deserialize, Serialize};

use super::pages::{self, ConnectedPage};
use super::services::PageServices;
use crate::flows::Handout;
use crate::identity::oidc::CONNECTIONS_PATH;
use crate::providers::{Account, ProviderId};
use crate::seal::{Purpose, Sealer};
use crate::ui;
use grantry_base::clock::unix_now;

/// How long the page's sealed words open: long enough for a reload, short for a URL a proxy
/// may log.
const RECEIPT_TTL_SECS: i64 = 600;
/// The longest account name the page repeats (a provider's names are far shorter).
const MAX_ACCOUNT_CHARS: usize = 200;

/// What the page says of the sign-in, sealed into its URL.
#[derive(Serialize, Deserialize)]
struct Receipt {
    #[serde(rename = "h")]
    handout: Handout,
    /// The account's name as the provider gave it.
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    account: Option<String>,
}

/// How a sign-in that stored a grant ended.
#[derive(Clone, Copy)]
pub(super) struct Ended<'a> {
    pub(crate) provider: &'a ProviderId,
    pub(crate) account: Option<&'a Account>,
    pub(crate) handout: Handout,
    /// The provider granted fewer scopes than asked.
    pub(crate) less: bool,
}

/// Where the browser goes once the sign-in `ended`.
pub(super) fn location(sealer: &Sealer, ended: Ended<'_>) -> HeaderValue {
    let receipt = Receipt {
        handout: ended.handout,
        account: ended
            .account
            .map(|a| a.name.chars().take(MAX_ACCOUNT_CHARS).collect()),
    };
    let sealed = sealer.seal_timed(
        Purpose::ConnectedPage,
        ended.provider.as_str().as_bytes(),
        &receipt,
        unix_now(),
        RECEIPT_TTL_SECS,
    );
    let less = if ended.less { "&granted=less" } else { "" };
    let location = format!(
        "/connected?provider={}{less}&receipt={sealed}",
        ended.provider
    );
    HeaderValue::from_str(&location).unwrap_or(HeaderValue::from_static("/connected"))
}

#[derive(Deserialize)]
pub(super) struct ConnectedQuery {
    provider: Option<String>,
    /// `less` when the provider granted fewer scopes than asked.
    granted: Option<String>,
    receipt: Option<String>,
}

pub(super) async fn show(
    State(state): State<PageServices>,
    Query(q): Query<ConnectedQuery>,
) -> Response {
    let provider = q.provider.as_deref().and_then(|id| state.catalog.get(id));
    let name = provider.map_or_else(
        || ui::t("connected-unknown-provider"),
        |p| p.display_name.clone(),
    );
    let receipt = match (provider, q.receipt.as_deref()) {
        (Some(provider), Some(sealed)) => state
            .sealer
            .open_timed::<Receipt>(
                Purpose::ConnectedPage,
                provider.id.as_str().as_bytes(),
                sealed,
                unix_now(),
            )
            .inspect_err(|e| tracing::debug!(error = %e, "the connected page's words do not open"))
            .ok(),
        _ => None,
    };
    let (handout, account) = receipt.map_or((Handout::Unsaid, None), |r| (r.handout, r.account));
    let (title, body) = match q.granted.as_deref() {
        Some("less") => ("connected-less-title", "connected-less-body"),
        _ => ("connected-title", next_step(handout)),
    };
    pages::render(
        StatusCode::OK,
        &ConnectedPage {
            title: &ui::t(title),
            body: &ui::t_with(body, &[("provider", &name)]),
            provider_name: &name,
            account: account.as_deref(),
            manage: CONNECTIONS_PATH,
        },
    )
}

/// What the person does next, by how the link reached them.
fn next_step(handout: Handout) -> &'static str {
    match handout {
        Handout::Waits => "connected-body",
        Handout::AskAgain => "connected-body-ask-again",
        Handout::Card => "connected-body-card",
        Handout::ConnectionsPage => "connected-body-page",
        Handout::Unsaid => "connected-body-unsaid",
    }
}
