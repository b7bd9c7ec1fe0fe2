//! `create_invoice`: a form tool. It does not fail on missing or invalid fields: it asks for
//! exactly those (the `mcp` layer drives the rounds) and creates the invoice once every field
//! holds, at most once per idempotency key.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value, json};

use super::args::ProviderArg;
use super::target::AccountArg;
use super::{
    Attempt, Call, FormTool, Problem, Step, ToolError, ToolResult, ToolSpec, finish, invoice_draft,
    schema, target,
};
use crate::connections::Called;
use crate::connections::ChosenGrant;
use crate::grants::ReauthReason;
use crate::providers::Provider;
use crate::providers::adapters;
use crate::providers::invoice::{ApiError, NewInvoice};
use crate::ui::Lang;

pub(crate) const NAME: &str = "create_invoice";
/// The arguments that say where to create it, not what: never asked for in a form.
const ROUTING: [&str; 2] = ["provider", "account"];

pub(crate) fn spec() -> ToolSpec {
    let mut schema = invoice_draft::input_schema();
    // Missing fields are asked for, not refused: the schema lists them without requiring.
    schema
        .as_object_mut()
        .expect("an object schema")
        .remove("required");
    if let (Some(fields), Value::Object(routing)) = (
        schema["properties"].as_object_mut(),
        &mut schema::input::<Routing>()["properties"],
    ) {
        fields.append(routing);
    }
    ToolSpec {
        name: NAME,
        title: "Create an invoice",
        description: "Create an invoice in the user's connected billing account. Give what you \
                      know; anything missing or invalid is asked of the user in a form (or, \
                      from a client that cannot ask, named in the error so you can correct it).",
        input_schema: schema,
        output_schema: None,
        annotations: json!({
            "title": "Create an invoice",
            "readOnlyHint": false,
            "destructiveHint": false,
            "idempotentHint": false,
            "openWorldHint": true
        }),
    }
}

/// Where to create it: the arguments never asked for in a form (the invoice's own fields are
/// [`invoice_draft`]'s).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Routing {
    /// Which connected provider to create it at; needed only when several are connected.
    provider: Option<ProviderArg>,
    account: Option<AccountArg>,
}

/// The arguments: where to create it, typed, and the invoice's fields as given, which the
/// validator judges and a form asks again for ([`invoice_draft`]). The form tool its rounds
/// are driven on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Args {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) provider: Option<ProviderArg>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) account: Option<AccountArg>,
    /// Only [`invoice_draft::FIELDS`], each as the client gave it.
    #[serde(flatten)]
    draft: Map<String, Value>,
}

impl<'de> Deserialize<'de> for Args {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut draft = Map::<String, Value>::deserialize(deserializer)?;
        if let Some(unknown) = draft.keys().find(|k| {
            !ROUTING.contains(&k.as_str()) && !invoice_draft::FIELDS.contains(&k.as_str())
        }) {
            return Err(D::Error::custom(format!("unknown argument `{unknown}`")));
        }
        let routing: Map<String, Value> = ROUTING
            .iter()
            .filter_map(|name| draft.remove_entry(*name))
            .collect();
        let Routing { provider, account } =
            serde_path_to_error::deserialize(Value::Object(routing)).map_err(|e| {
                let path = e.path().to_string();
                D::Error::custom(format!("{path}: {}", e.into_inner()))
            })?;
        Ok(Self {
            provider,
            account,
            draft,
        })
    }
}

impl Args {
    /// Which provider and which of the caller's grants there the call is about; otherwise
    /// the answer saying what is wrong.
    async fn target<'a>(&self, call: &Call<'a>) -> Step<(&'a Provider, ChosenGrant)> {
        let provider = target::provider(call, self.provider.as_deref()).await?;
        let key = target::account_or_refusal(call, provider, self.account.as_deref()).await?;
        Ok((provider, key))
    }

    /// Whether the call can go anywhere: `None` when its connection is usable, the answer
    /// saying why not otherwise.
    async fn connected(&self, call: &Call<'_>) -> Step<Option<ToolResult>> {
        let (provider, chosen) = self.target(call).await?;
        let why = match call.services.connections.grant(&chosen.key).await? {
            Some(grant) if grant.is_usable() => return Ok(None),
            Some(grant) => grant.health.reason.as_deref().and_then(ReauthReason::parse),
            None => None,
        };
        Ok(Some(target::not_connected(
            call.services.brand,
            provider,
            why,
        )))
    }

    /// Creates `new` at `provider`, through the provider-call loop.
    async fn create(
        call: &Call<'_>,
        (provider, chosen): (&Provider, &ChosenGrant),
        new: &NewInvoice,
        idempotency_key: &str,
    ) -> Result<ToolResult, ToolError> {
        let services = call.services;
        let created = services
            .connections
            .call(provider, chosen, call.client, |token, account| async move {
                let api = services.connections.api(provider, &token, account.as_ref());
                adapters::create_invoice(&api, new, idempotency_key).await
            })
            .await?;
        Ok(match created {
            Called::Done(invoice) => {
                let mut result = ToolResult::structured(json!({
                    "provider": provider.id,
                    "invoice": invoice,
                }));
                result.text = format!("Created invoice {}.", invoice.summary());
                result
            }
            Called::SignInNeeded(why) => target::not_connected(services.brand, provider, why),
            Called::Unavailable(after) => {
                target::unavailable(provider, after, "nothing was created")
            }
            Called::Failed(ApiError::Unsupported) => ToolResult::error(format!(
                "grantry cannot create invoices at {} yet; nothing was created.",
                provider.display_name
            )),
            Called::Failed(e) => {
                tracing::warn!(provider = %provider.id, error = %e, "creating an invoice failed");
                ToolResult::error(format!(
                    "{} did not create the invoice ({e}). Nothing was created; try again.",
                    provider.display_name
                ))
            }
        })
    }
}

#[async_trait]
impl FormTool for Args {
    fn request_key(&self) -> &'static str {
        "invoice_details"
    }

    fn field_schema(&self, field: &str, lang: Lang) -> Value {
        invoice_draft::field_schema(field, lang)
    }

    fn optional(&self, field: &str) -> bool {
        field == "description"
    }

    fn values(&self) -> Map<String, Value> {
        self.draft.clone()
    }

    async fn precheck(&self, call: &Call<'_>) -> Result<Option<ToolResult>, ToolError> {
        finish(self.connected(call).await, Some)
    }

    async fn attempt(
        &self,
        call: &Call<'_>,
        values: &Map<String, Value>,
        idempotency_key: &str,
    ) -> Result<Attempt, ToolError> {
        let new = match invoice_draft::validate(values) {
            Ok(new) => new,
            Err(problems) => return Ok(Attempt::Problems(problems)),
        };
        let created = async {
            let (provider, chosen) = self.target(call).await?;
            Ok(Self::create(call, (provider, &chosen), &new, idempotency_key).await?)
        };
        finish(created.await, |answer| answer).map(Attempt::Done)
    }

    fn form_message(&self, problems: &[Problem], lang: Lang, brand: &str) -> String {
        format!(
            "{}\n{}",
            lang.t_with("mcp-invoice-needs", &[("brand", brand)]),
            problems
                .iter()
                .map(|p| format!(
                    "- {}: {}",
                    invoice_draft::field_schema(p.field, lang)["title"]
                        .as_str()
                        .unwrap_or(p.field),
                    p.text(lang)
                ))
                .collect::<Vec<_>>()
                .join("\n")
        )
    }

    fn without_form(&self, problems: &[Problem]) -> ToolResult {
        ToolResult::error(format!(
            "The invoice was not created: {}",
            problems
                .iter()
                // For the model: in English.
                .map(|p| format!("`{}`: {}", p.field, p.text(Lang::En)))
                .collect::<Vec<_>>()
                .join(" ")
        ))
    }

    fn cancelled(&self) -> ToolResult {
        ToolResult::text("Creation cancelled.")
    }
}
