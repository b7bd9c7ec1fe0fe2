//! Refusals at the authorization endpoint: pages where the client cannot be trusted,
//! redirects with `error=` (and `state`, `iss`) where it can.

use super::*;

/// The valid request with `name` replaced by `value` (or left out when `value` is empty).
fn with(name: &'static str, value: &'static str) -> Vec<(&'static str, &'static str)> {
    let mut params: Vec<_> = authorize_params()
        .into_iter()
        .filter(|(k, _)| *k != name)
        .collect();
    if !value.is_empty() {
        params.push((name, value));
    }
    params
}

/// Asserts a redirect to the registered callback carrying `error`, the state and iss.
fn assert_error_redirect(reply: &Reply, error: &str) {
    assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", reply.body);
    let (location, pairs) = reply.location_params();
    assert!(location.as_str().starts_with(&format!("{REDIRECT}?")));
    assert_eq!(param(&pairs, "error"), Some(error));
    assert!(param(&pairs, "error_description").is_some());
    assert_eq!(param(&pairs, "state"), Some(STATE));
    assert_eq!(param(&pairs, "iss"), Some(ISSUER));
    assert_eq!(param(&pairs, "code"), None);
}

#[tokio::test]
async fn unregistered_redirect_uri_gets_a_page_and_no_redirect() {
    let demo = provider(config());
    for evil in [
        "https://evil.example/callback",
        "http://127.0.0.1:8080/oauth/callback/",
        "http://127.0.0.1:8080/oauth/callback?x=1",
    ] {
        let mut params = with("redirect_uri", "");
        params.push(("redirect_uri", evil));
        let reply = get(&demo, &authorize_path(&params), None).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{evil}");
        assert!(
            reply.headers.get(LOCATION).is_none(),
            "never redirect to {evil}"
        );
        assert_html_security_headers(&reply);
        assert!(reply.body.contains("not registered"));
    }
}

#[tokio::test]
async fn unknown_or_missing_client_gets_a_page_and_no_redirect() {
    let demo = provider(config());
    for params in [with("client_id", "someone-else"), with("client_id", "")] {
        let reply = get(&demo, &authorize_path(&params), None).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST);
        assert!(reply.headers.get(LOCATION).is_none());
    }
}

#[tokio::test]
async fn missing_or_plain_pkce_is_sent_back_as_invalid_request() {
    let demo = provider(config());
    for params in [
        with("code_challenge", ""),
        with("code_challenge_method", ""),
        with("code_challenge_method", "plain"),
    ] {
        let reply = get(&demo, &authorize_path(&params), None).await;
        assert_error_redirect(&reply, "invalid_request");
        let (_, pairs) = reply.location_params();
        assert_eq!(
            param(&pairs, "error_description"),
            Some("PKCE S256 is required")
        );
    }
}

#[tokio::test]
async fn other_response_types_and_scopes_are_sent_back() {
    let demo = provider(config());
    let reply = get(
        &demo,
        &authorize_path(&with("response_type", "token")),
        None,
    )
    .await;
    assert_error_redirect(&reply, "unsupported_response_type");
    let reply = get(
        &demo,
        &authorize_path(&with("scope", "invoices:delete")),
        None,
    )
    .await;
    assert_error_redirect(&reply, "invalid_scope");
}

#[tokio::test]
async fn deny_sends_access_denied_with_state_and_iss() {
    let demo = provider(config());
    let mut form = authorize_params();
    form.extend([("user", "demo-user"), ("decision", "deny")]);
    let reply = post_form(&demo, "/authorize", None, &form).await;
    assert_error_redirect(&reply, "access_denied");
    assert_eq!(demo.stats().codes_issued, 0);
}

#[tokio::test]
async fn the_consent_post_revalidates_its_hidden_fields() {
    let demo = provider(config());
    let mut form = with("redirect_uri", "https://evil.example/cb");
    form.extend([("user", "demo-user"), ("decision", "approve")]);
    let reply = post_form(&demo, "/authorize", None, &form).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(reply.headers.get(LOCATION).is_none());

    let mut form = with("code_challenge", "");
    form.extend([("user", "demo-user"), ("decision", "approve")]);
    let reply = post_form(&demo, "/authorize", None, &form).await;
    assert_error_redirect(&reply, "invalid_request");
    assert_eq!(demo.stats().codes_issued, 0);
}

#[tokio::test]
async fn a_bad_user_name_shows_the_form_again() {
    let demo = provider(config());
    let mut form = authorize_params();
    form.extend([("user", "<b>mallory</b>"), ("decision", "approve")]);
    let reply = post_form(&demo, "/authorize", None, &form).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(reply.headers.get(LOCATION).is_none());
    assert_html_security_headers(&reply);
    assert!(reply.body.contains("1 to 64 letters"));
    assert!(!reply.body.contains("<b>mallory"), "user input is escaped");
    assert_eq!(demo.stats().codes_issued, 0);
}

#[tokio::test]
async fn state_is_escaped_on_the_page_and_passed_through_exactly() {
    let demo = provider(config());
    let nasty = r#""><script>alert(1)</script> & ü"#;
    let mut params = with("state", "");
    params.push(("state", nasty));
    let page = get(&demo, &authorize_path(&params), None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(!page.body.contains("<script>"), "state is HTML-escaped");

    let mut form = params.clone();
    form.extend([("user", "demo-user"), ("decision", "approve")]);
    let reply = post_form(&demo, "/authorize", None, &form).await;
    let (_, pairs) = reply.location_params();
    assert_eq!(param(&pairs, "state"), Some(nasty));
}

#[tokio::test]
async fn a_repeated_parameter_is_refused() {
    let demo = provider(config());
    let mut params = authorize_params();
    params.push(("redirect_uri", "https://evil.example/cb"));
    let reply = get(&demo, &authorize_path(&params), None).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert!(reply.headers.get(LOCATION).is_none());

    let mut params = authorize_params();
    params.push(("code_challenge", CHALLENGE));
    let reply = get(&demo, &authorize_path(&params), None).await;
    assert_error_redirect(&reply, "invalid_request");
}
