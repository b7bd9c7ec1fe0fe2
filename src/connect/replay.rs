//! A callback for a flow that was already claimed: a reload, a replay, or the first callback
//! coming back after the replica that claimed it died mid-exchange.
//!
//! - Connected, or superseded: a page saying so.
//! - Still `redeeming` within [`REDEEM_DEADLINE_SECS`]: the sign-in is finishing; the same
//!   browser (it holds the binding cookie) is asked to wait, anyone else is a security event.
//! - `redeeming` past it: the replica redeeming the code died. The flow is marked failed (one
//!   caller wins), the person is told to start again from the same link, and the audit line
//!   is a notice of the recovery, not an alarm.
//! - Failed or denied: used up; a security event naming the flow, its principal and provider.

use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::errors::PageError;
use super::services::PageServices;
use super::{binding, pages};
use crate::audit::Audit;
use crate::flows::{Flow, FlowStatus, REDEEM_DEADLINE_SECS};
use crate::ui;
use grantry_base::clock::unix_now;

/// The page for a callback that found its flow already claimed.
pub(super) async fn already_used(
    state: &PageServices,
    flow: &Flow,
    headers: &HeaderMap,
) -> Response {
    let audit = Audit {
        principal: Some(&flow.principal),
        provider: Some(&flow.provider),
        flow_id: Some(&flow.id),
        client: None,
    };
    let now = unix_now();
    match flow.status {
        FlowStatus::Connected => pages::message(
            StatusCode::OK,
            &ui::t("error-already-connected-title"),
            &ui::t("error-already-connected-body"),
        ),
        FlowStatus::Superseded => pages::message(
            StatusCode::BAD_REQUEST,
            &ui::t("error-superseded-title"),
            &ui::t("error-superseded-body"),
        ),
        FlowStatus::Redeeming if flow.is_stuck(now) => recover_stuck(state, flow, audit, now).await,
        FlowStatus::Redeeming if same_browser(state, flow, headers) => {
            audit.notice(
                "callback.reloaded",
                "callback again while the sign-in finishes",
            );
            pages::message(
                StatusCode::CONFLICT,
                &ui::t("error-still-finishing-title"),
                &ui::t("error-still-finishing-body"),
            )
        }
        _ => {
            audit.alarm("callback.state_reused", "callback for a flow already used");
            pages::message(
                StatusCode::BAD_REQUEST,
                &ui::t("error-already-used-title"),
                &ui::t("error-already-used-body"),
            )
        }
    }
}

/// Whether the browser holds the binding cookie set for this flow at Continue.
fn same_browser(state: &PageServices, flow: &Flow, headers: &HeaderMap) -> bool {
    binding::matches(
        headers,
        &flow.id,
        state.config.is_https(),
        &flow.binding_hash,
    )
}

/// Ends a flow whose replica died while redeeming its code, and says to start again.
async fn recover_stuck(state: &PageServices, flow: &Flow, audit: Audit<'_>, now: i64) -> Response {
    match state
        .flows
        .fail_stuck(flow, now - REDEEM_DEADLINE_SECS)
        .await
    {
        Ok(true) => {
            crate::metrics::sign_in(&flow.provider, "failed");
            audit.notice(
                "callback.stuck_flow_failed",
                "a sign-in left redeeming by a replica that stopped is marked failed",
            );
        }
        Ok(false) => {} // another callback recovered it first
        Err(e) => return PageError::Store(e).into_response(),
    }
    pages::message(
        StatusCode::BAD_GATEWAY,
        &ui::t("error-interrupted-title"),
        &ui::t("error-interrupted-body"),
    )
}
