//! Revocation at the provider (RFC 7009, or the provider's own shape): when a user disconnects,
//! and for tokens redeemed or refreshed for a grant that can no longer be kept.

use super::catalog::{Provider, RevokeBody, TokenAuth};
use super::http::{OutboundError, transport_reason};
use super::oauth::{ProviderToken, TokenSet};
use crate::telemetry::outbound::{self, Peer};

/// The URL a revocation at `provider` is sent to, as [`shown`] writes it; `None` where it
/// offers none.
pub(crate) fn revoke_url(provider: &Provider) -> Option<String> {
    let url = provider.oauth()?.revoke_url.as_ref()?;
    Some(shown(url))
}

/// `url` for an operator or a log line: without user name, password, query or fragment,
/// which may carry a credential (a token goes in the query of a `revoke_body = "query"`
/// revocation).
pub(crate) fn shown(url: &url::Url) -> String {
    let mut shown = url.clone();
    // A URL that cannot have credentials has none to remove.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

/// Asks the provider to revoke `token` (RFC 7009, or the provider's own shape). `Ok(false)`:
/// the provider has no revocation endpoint (an API key has none: disconnecting forgets it). A 200 (RFC 7009 also for unknown tokens) is
/// success; anything else is an error the caller reports.
pub(crate) async fn revoke(
    http: &reqwest::Client,
    provider: &Provider,
    token: &ProviderToken,
    is_refresh_token: bool,
) -> Result<bool, OutboundError> {
    let token = token.expose();
    let Some((oauth, url)) = provider
        .oauth()
        .and_then(|oauth| Some((oauth, oauth.revoke_url.clone()?)))
    else {
        return Ok(false);
    };
    let secret = oauth.client_secret.clone().unwrap_or_default();
    let hint = if is_refresh_token {
        "refresh_token"
    } else {
        "access_token"
    };
    let post_credentials = oauth.token_auth == TokenAuth::Post;
    let mut request = match oauth.revoke_body {
        RevokeBody::Form => {
            let mut form = vec![("token", token), ("token_type_hint", hint)];
            if post_credentials {
                form.push(("client_id", &oauth.client_id));
                form.push(("client_secret", &secret));
            }
            http.post(url).form(&form)
        }
        RevokeBody::Json => {
            let mut body = serde_json::json!({ "token": token });
            if post_credentials {
                body["client_id"] = oauth.client_id.clone().into();
                body["client_secret"] = secret.clone().into();
            }
            http.post(url).json(&body)
        }
        RevokeBody::Query => {
            let mut url = url;
            url.query_pairs_mut().append_pair("token", token);
            http.post(url)
        }
    };
    request = match oauth.token_auth {
        TokenAuth::Basic => request.basic_auth(&oauth.client_id, Some(&secret)),
        TokenAuth::SecretKey => request.basic_auth(&secret, Some("")),
        TokenAuth::Post => request,
    };
    let peer = Peer {
        role: "provider-revoke",
        name: Some(&provider.id),
    };
    let response = outbound::send(request, peer)
        .await
        .map_err(|e| OutboundError::Transport(transport_reason(&e)))?;
    if response.status().is_success() {
        Ok(true)
    } else {
        Err(OutboundError::Status(response.status().as_u16()))
    }
}

/// Revokes `tokens` (the refresh token where there is one, else the access token) without
/// waiting: tokens grantry will not keep must not stay alive at the provider. A failure is
/// logged; there is no one left to tell.
pub(crate) fn revoke_in_background(http: &reqwest::Client, provider: &Provider, tokens: &TokenSet) {
    let (http, provider) = (http.clone(), provider.clone());
    let (token, is_refresh) = match &tokens.refresh_token {
        Some(refresh) => (refresh.clone(), true),
        None => (tokens.access_token.clone(), false),
    };
    let revoking = async move {
        if let Err(e) = revoke(&http, &provider, &token, is_refresh).await {
            tracing::warn!(provider = %provider.id, error = %e, "orphaned tokens not revoked");
        }
    };
    tokio::spawn(crate::telemetry::context::carried(revoking));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shown_url_keeps_where_it_goes_and_drops_what_may_be_a_credential() {
        let url = url::Url::parse("https://app:secret@idp.example:8443/oauth/revoke?token=t0k#f")
            .unwrap();
        assert_eq!(shown(&url), "https://idp.example:8443/oauth/revoke");
        let plain = url::Url::parse("http://127.0.0.1:9/revoke").unwrap();
        assert_eq!(shown(&plain), "http://127.0.0.1:9/revoke");
    }
}
