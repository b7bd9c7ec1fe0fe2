//! One `tools/call` of a plain tool (grantry's own, with no form or confirmation round:
//! `list_invoices`, `list_connections`) through its URL-mode sign-in rounds.

use crate::config::NoUrlElicitation;
use crate::grants::ReauthReason;
use crate::identity::{McpClient, Principal};
use crate::ids::AccountId;
use crate::mcp_calls::results::CallAnswer;
use crate::mcp_calls::rounds::account_choice::{self, Choice};
use crate::mcp_calls::rounds::card;
use crate::mcp_calls::rounds::request_state::{ArgumentsDigest, StateClaims, ToolRequest};
use crate::mcp_calls::rounds::sign_in::{self, Answer, HoldEnd};
use crate::mcp_calls::rounds::{Patience, Retry, RoundCall, Rounds};
use crate::mcp_wire::capabilities::Capabilities;
use crate::mcp_wire::jsonrpc::RpcError;
use crate::providers::ProviderId;
use crate::tools::{Arguments, Tool, ToolError, ToolOutcome};
use grantry_base::clock::unix_now;

/// What a legacy-era plain call comes to.
pub(crate) enum LegacyAnswer {
    Done(CallAnswer),
    SignIn(sign_in::UrlElicitation),
}

/// One `tools/call` of a grantry tool, through its sign-in rounds.
pub(crate) struct PlainCall<'a> {
    rounds: Rounds<'a>,
    principal: &'a Principal,
    client: Option<&'a McpClient>,
    tool: Tool,
    arguments: &'a Arguments,
}

impl<'a> PlainCall<'a> {
    /// The call of `principal` (through `client`) with `arguments`, of the tool they are for.
    pub(crate) fn new(
        rounds: Rounds<'a>,
        (principal, client): (&'a Principal, Option<&'a McpClient>),
        arguments: &'a Arguments,
    ) -> Self {
        Self {
            rounds,
            principal,
            client,
            tool: arguments.tool(),
            arguments,
        }
    }

    /// The call: the tool, or the sign-in or account-choice round it needs.
    pub(crate) async fn run(
        &self,
        retry: &Retry,
        capabilities: Capabilities,
    ) -> Result<CallAnswer, RpcError> {
        if let Some(sealed) = retry.request_state.as_deref()
            && account_choice::is_answer(retry.responses.as_ref())
        {
            return self.account_chosen(sealed, retry, capabilities).await;
        }
        let claims = match retry.request_state.as_deref() {
            Some(sealed) => Some(self.open_state(sealed)?),
            None => None,
        };
        if let Some(claims) = &claims
            && let Answer::Refused(action) =
                sign_in::answer(retry.responses.as_ref(), &claims.provider)
        {
            let why = format!("the user chose '{action}'");
            return Ok(sign_in::not_connected(&self.rounds, &claims.provider, &why).into());
        }
        let outcome = self.tool().await?;
        let Some(claims) = claims.filter(|c| {
            matches!(&outcome, ToolOutcome::NeedsConnection { provider, .. } if *provider == c.provider)
        }) else {
            return self.first_round(outcome, capabilities);
        };
        // Capabilities are declared per request: a retry must declare them too.
        if !capabilities.takes_sign_in_round() {
            return self.first_round(outcome, capabilities);
        }
        self.after_sign_in(&claims, retry.patience, capabilities)
            .await
    }

    /// A retry answering "which account?": the call with the chosen account, the declined
    /// answer, or (an answer that does not hold) the call as first made.
    async fn account_chosen(
        &self,
        sealed: &str,
        retry: &Retry,
        capabilities: Capabilities,
    ) -> Result<CallAnswer, RpcError> {
        let call = self.call();
        match account_choice::answered(&call, sealed, retry.responses.as_ref(), unix_now())? {
            Choice::Chose(account) => {
                let outcome = self.tool_at(Some(&account)).await?;
                self.first_round(outcome, capabilities)
            }
            Choice::Declined => Ok(account_choice::declined().into()),
            Choice::Invalid => {
                let outcome = self.tool().await?;
                self.first_round(outcome, capabilities)
            }
        }
    }

    /// A retry of a sign-in round: held until the sign-in lands, is denied, or the hold ends.
    async fn after_sign_in(
        &self,
        claims: &StateClaims,
        patience: Patience,
        capabilities: Capabilities,
    ) -> Result<CallAnswer, RpcError> {
        match sign_in::hold(&self.rounds, self.principal, claims, patience).await {
            HoldEnd::Connected(_turn) => match self.tool().await? {
                ToolOutcome::NeedsConnection { .. } => Ok(CallAnswer::InputRequired(
                    sign_in::repeat_round(&self.rounds, self.principal, claims),
                )),
                outcome => self.first_round(outcome, capabilities),
            },
            HoldEnd::Denied => Ok(sign_in::not_connected(
                &self.rounds,
                &claims.provider,
                "the sign-in was declined at the provider",
            )
            .into()),
            HoldEnd::StillPending => Ok(CallAnswer::InputRequired(sign_in::repeat_round(
                &self.rounds,
                self.principal,
                claims,
            ))),
            HoldEnd::NeverOpened => {
                Ok(sign_in::never_opened(&self.rounds, self.principal, claims).into())
            }
        }
    }

    /// What a tool's outcome comes to with no round under way: its result, or the round it
    /// asks for (a sign-in, a choice of account) as the client's capabilities allow.
    fn first_round(
        &self,
        outcome: ToolOutcome,
        capabilities: Capabilities,
    ) -> Result<CallAnswer, RpcError> {
        match outcome {
            ToolOutcome::Done(result) => Ok(result.into()),
            ToolOutcome::NeedsConnection { provider, .. }
            | ToolOutcome::ShowCard { provider, .. }
                if capabilities.no_person =>
            {
                Ok(sign_in::no_person_to_sign_in(&self.rounds, self.tool, &provider).into())
            }
            ToolOutcome::ShowCard { provider, result } => Ok(CallAnswer::Complete(
                card::card_result(&self.rounds, self.principal, &provider, result),
            )),
            ToolOutcome::NeedsConnection { provider, reason } => {
                if !capabilities.takes_sign_in_round() {
                    return self.without_url_elicitation(&provider, reason, capabilities);
                }
                let wanted = sign_in::Wanted::to_read(&provider, reason);
                let round = sign_in::first_round(&self.rounds, wanted, self.request());
                Ok(CallAnswer::InputRequired(round))
            }
            ToolOutcome::ChooseAccount { provider, accounts } => {
                let Some(provider) = self.rounds.tools.catalog.get(&provider) else {
                    return Err(ToolError::InvalidArguments(format!(
                        "the provider `{provider}` is not offered here"
                    ))
                    .into());
                };
                if !capabilities.form_elicitation {
                    let listed = account_choice::without_form(provider, &accounts);
                    if capabilities.apps {
                        return Ok(card::pick_on_the_card(listed, &provider.id).into());
                    }
                    return Ok(listed.into());
                }
                let call = self.call();
                Ok(CallAnswer::InputRequired(account_choice::ask(
                    &call,
                    provider,
                    &accounts,
                    unix_now(),
                )))
            }
        }
    }

    /// The answer to a client that cannot open a sign-in link itself: a host that renders
    /// the connect card is sent to it; any other as `--no-url-elicitation` says.
    fn without_url_elicitation(
        &self,
        provider: &ProviderId,
        reason: Option<ReauthReason>,
        capabilities: Capabilities,
    ) -> Result<CallAnswer, RpcError> {
        if capabilities.apps {
            let (rounds, principal) = (&self.rounds, self.principal);
            return Ok(card::show_the_card(rounds, principal, self.tool, provider, reason).into());
        }
        match self.rounds.settings.no_url_elicitation {
            NoUrlElicitation::Spec => Err(missing_url_elicitation(self.tool)),
            NoUrlElicitation::Link => {
                let wanted = sign_in::Wanted::to_read(provider, reason);
                Ok(sign_in::link_for_person(&self.rounds, self.principal, wanted).into())
            }
        }
    }

    /// A plain tool call in a legacy-era session (2025-11-25): no `requestState` and no
    /// rounds. The tool runs; a missing connection is a URL elicitation for the caller to
    /// send as `-32042`, and the client's retry of the same call runs the tool again.
    pub(crate) async fn run_legacy(
        &self,
        capabilities: Capabilities,
    ) -> Result<LegacyAnswer, RpcError> {
        let (provider, reason) = match self.tool().await? {
            ToolOutcome::NeedsConnection { provider, reason } if capabilities.url_elicitation => {
                (provider, reason)
            }
            // No rounds in this era: a choice of account is the caller's to make (`account`).
            outcome => {
                let no_rounds = Capabilities {
                    url_elicitation: false,
                    form_elicitation: false,
                    // Nor tasks: a sign-in is the card's for a host that renders it.
                    tasks: false,
                    ..capabilities
                };
                return self.first_round(outcome, no_rounds).map(LegacyAnswer::Done);
            }
        };
        let wanted = sign_in::Wanted::to_read(&provider, reason);
        Ok(LegacyAnswer::SignIn(sign_in::url_elicitation(
            &self.rounds,
            self.principal,
            wanted,
        )))
    }

    fn request(&self) -> ToolRequest<'a> {
        ToolRequest {
            principal: self.principal,
            tool: self.tool.name(),
            arguments: ArgumentsDigest::of(self.arguments),
        }
    }

    fn open_state(&self, sealed: &str) -> Result<StateClaims, RpcError> {
        StateClaims::open(self.rounds.sealer, sealed, unix_now(), self.request()).map_err(
            |reason| {
                tracing::info!(%reason, principal = %self.principal.tag(), "requestState refused");
                RpcError::invalid_request_state()
            },
        )
    }

    fn call(&self) -> RoundCall<'a> {
        RoundCall::new(self.rounds, (self.principal, self.client), self.arguments)
    }

    async fn tool(&self) -> Result<ToolOutcome, RpcError> {
        self.tool_at(None).await
    }

    /// The tool, at the account the person chose if they did.
    async fn tool_at(&self, chosen: Option<&AccountId>) -> Result<ToolOutcome, RpcError> {
        Ok(self.arguments.run(&self.call().at(chosen)).await?)
    }
}

/// `-32021` (`--no-url-elicitation spec`), naming what would work.
fn missing_url_elicitation(tool: Tool) -> RpcError {
    RpcError::missing_capability(
        format!(
            "{} needs a client that supports URL-mode elicitation to connect an account; \
             a client without it can reach grantry through `grantry bridge`, and the server \
             can instead answer with the sign-in link (--no-url-elicitation link)",
            tool.name()
        ),
        serde_json::json!({"elicitation": {"url": {}}}),
    )
}
