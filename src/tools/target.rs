//! Which provider and account a tool call is about, in the tools' words: the provider named
//! (if offered), else the only one connected, else the catalog's default; at it, the account
//! [`crate::connections::Connections::choose_account`] finds. What the caller must correct is a tool error.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::args::Short;
use super::{Call, Step, Stop, ToolResult};
use crate::connections::{AccountChoice, Choosable, ChosenGrant};
use crate::grants::ReauthReason;
use crate::ids::AccountId;
use crate::providers::Provider;
use crate::ui::Lang;

/// The provider to use: the one named; else the only one connected; else the catalog's
/// default (the caller will be asked to connect it). A provider not offered, or several
/// connected and none named, is the caller's to correct: a tool error saying so.
pub(crate) async fn provider<'a>(call: &Call<'a>, named: Option<&str>) -> Step<&'a Provider> {
    let catalog = &call.services.catalog;
    if let Some(id) = named {
        return catalog.get(id).ok_or_else(|| {
            Stop::Answer(ToolResult::error(format!(
                "The provider `{id}` is not offered here; offered: {}.",
                catalog
                    .all()
                    .map(|p| p.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        });
    }
    // One provider offered (the usual deployment): nothing to choose, and no need to read
    // every grant of the caller on each call.
    if catalog.all().nth(1).is_none() {
        return Ok(catalog.default_provider());
    }
    let mut providers: Vec<&Provider> = call
        .services
        .connections
        .connected(call.principal)
        .await?
        .into_iter()
        .map(|c| c.provider)
        .collect();
    providers.dedup_by_key(|p| p.id.as_str());
    match providers.as_slice() {
        [] => Ok(catalog.default_provider()),
        [provider] => Ok(provider),
        several => Err(Stop::Answer(ToolResult::error(format!(
            "Several billing accounts are connected ({}); say which one with `provider`.",
            several
                .iter()
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )))),
    }
}

/// Which of the caller's grants at a provider a call uses.
pub(crate) enum Chosen {
    /// This one (absent if none is connected: using it asks to sign in).
    Grant(ChosenGrant),
    /// Several are connected and the call named none: the person or the caller must say.
    Ambiguous(Vec<Choosable>),
}

/// The grant a call uses at `provider`: as [`crate::connections::Connections::choose_account`] finds it, for
/// the account the person chose in a round, else the one `named`; a name that matches no
/// single account is the caller's to correct: a tool error listing what is connected.
pub(crate) async fn account(
    call: &Call<'_>,
    provider: &Provider,
    named: Option<&str>,
) -> Step<Chosen> {
    let named = call.chosen_account.map(AccountId::as_str).or(named);
    let choice = call
        .services
        .connections
        .choose_account(call.principal, provider, named)
        .await?;
    match choice {
        AccountChoice::Found(chosen) => Ok(Chosen::Grant(chosen)),
        AccountChoice::AskWhich(accounts) => Ok(Chosen::Ambiguous(accounts)),
        AccountChoice::NoneNamed { named, connected } => {
            Err(Stop::Answer(ToolResult::error(format!(
                "`{named}` names no single connected {} account (give its id, or a name no \
                 other account has). {}",
                provider.display_name,
                which_accounts(provider, &connected)
            ))))
        }
    }
}

/// The grant a call that cannot ask uses: as [`account`] chooses; several connected and none
/// named is a tool error listing them.
pub(crate) async fn account_or_refusal(
    call: &Call<'_>,
    provider: &Provider,
    named: Option<&str>,
) -> Step<ChosenGrant> {
    match account(call, provider, named).await? {
        Chosen::Grant(chosen) => Ok(chosen),
        Chosen::Ambiguous(accounts) => Err(Stop::Answer(ToolResult::error(format!(
            "Several {} accounts are connected. {}",
            provider.display_name,
            which_accounts(provider, &accounts)
        )))),
    }
}

/// Which connected account at the provider (its name or id, as list_connections shows).
/// Needed only when several are connected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub(crate) struct AccountArg(Short<MAX_ACCOUNT_LEN>);

impl std::ops::Deref for AccountArg {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

/// The longest `account` argument taken.
pub(crate) const MAX_ACCOUNT_LEN: usize = 255;

/// Names the connected accounts, for a caller to choose from with `account`; a broken one
/// is said to be.
pub(crate) fn which_accounts(provider: &Provider, accounts: &[Choosable]) -> String {
    let listed: Vec<String> = accounts
        .iter()
        .map(|c| {
            let broken = if c.needs_reauth {
                ", needs reconnecting: using it asks the user to sign in again"
            } else {
                ""
            };
            format!("{} (id {}{broken})", c.account.name, c.account.id)
        })
        .collect();
    format!(
        "Connected {} accounts: {}; say which one with `account` (its name or id).",
        provider.display_name,
        listed.join(", ")
    )
}

/// The answer for a write at a provider the caller has not connected (or whose connection
/// needs renewing, and why): the sign-in is list_invoices' to ask for.
/// Written for the model, so in English.
pub(crate) fn not_connected(
    brand: &str,
    provider: &Provider,
    why: Option<ReauthReason>,
) -> ToolResult {
    let name = &provider.display_name;
    let what = match why {
        Some(why) => format!(
            "The {name} connection needs to be renewed: {}.",
            why.explained(Lang::En, brand, name)
        ),
        None => format!("No {name} account is connected."),
    };
    ToolResult::error(format!(
        "{what} Call list_invoices first: it asks the user to connect."
    ))
}

/// A retryable tool error: the provider is busy or failing. `doing` says what could not be
/// done ("invoices could not be listed", "nothing was changed").
pub(crate) fn unavailable(
    provider: &Provider,
    retry_after_secs: Option<u64>,
    doing: &str,
) -> ToolResult {
    let when = match retry_after_secs {
        Some(secs) => format!("try again in {secs} seconds"),
        None => "try again in a minute".into(),
    };
    ToolResult::error(format!(
        "{} is not answering right now, so {doing}. This is temporary: {when}.",
        provider.display_name
    ))
}
