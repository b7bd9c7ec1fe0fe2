//! Client authentication at `/token` and `/revoke` (RFC 6749 §2.3.1).
//!
//! Two methods: HTTP Basic with `client_id:client_secret`, each form-urlencoded before being
//! joined (RFC 6749 §2.3.1, a detail many servers get wrong), or `client_id` and
//! `client_secret` in the form body. A request using both is refused, as the RFC requires.
//! Secrets are compared as digests in constant time.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;
use base64::Engine as _;
use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

use super::Inner;
use super::oauth_error::OAuthError;
use super::params::{Params, Repeated};
use crate::seal;

/// Standard base64; padding optional, since some clients drop it.
const BASIC_B64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The digest a client secret is compared as.
pub(super) fn secret_digest(secret: &str) -> String {
    seal::digest("grantry/demo/client-secret/v1", &[secret.as_bytes()])
}

/// Authenticates the calling client; returns its client id.
pub(super) fn authenticate(
    inner: &Inner,
    headers: &HeaderMap,
    params: &Params,
) -> Result<String, OAuthError> {
    let repeated =
        |_: Repeated| OAuthError::invalid_request("a parameter was given more than once");
    let body_id = params.get("client_id").map_err(repeated)?;
    let body_secret = params.get("client_secret").map_err(repeated)?;

    let (client_id, secret) = match basic_credentials(headers)? {
        Some((id, secret)) => {
            if body_secret.is_some() {
                return Err(OAuthError::invalid_request(
                    "use one client authentication method, not both Basic and client_secret",
                ));
            }
            // A client_id in the body alongside Basic is tolerated only if it names the same client.
            if body_id.is_some_and(|b| b != id) {
                return Err(OAuthError::invalid_client(
                    "client_id in the body differs from the Basic credentials",
                ));
            }
            (id, secret)
        }
        None => match (body_id, body_secret) {
            (Some(id), Some(secret)) => (id.to_owned(), secret.to_owned()),
            _ => {
                return Err(OAuthError::invalid_client(
                    "client authentication is required",
                ));
            }
        },
    };

    let id_ok = client_id == inner.config.client_id;
    let secret_ok = seal::constant_time_eq(&secret_digest(&secret), &inner.client_secret_digest);
    if id_ok && secret_ok {
        Ok(client_id)
    } else {
        tracing::info!(id_known = id_ok, "demo: client authentication failed");
        Err(OAuthError::invalid_client("client authentication failed"))
    }
}

/// The Basic credentials of the request, if it sent an `Authorization` header.
fn basic_credentials(headers: &HeaderMap) -> Result<Option<(String, String)>, OAuthError> {
    let Some(value) = headers.get(AUTHORIZATION) else {
        return Ok(None);
    };
    let malformed = || OAuthError::invalid_client("malformed Basic credentials");
    let value = value.to_str().map_err(|_| malformed())?;
    let (scheme, encoded) = value.split_once(' ').ok_or_else(malformed)?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(OAuthError::invalid_client(
            "the Authorization header must use the Basic scheme",
        ));
    }
    let decoded = BASIC_B64.decode(encoded.trim()).map_err(|_| malformed())?;
    let decoded = String::from_utf8(decoded).map_err(|_| malformed())?;
    let (id, secret) = decoded.split_once(':').ok_or_else(malformed)?;
    let id = form_decode(id).ok_or_else(malformed)?;
    let secret = form_decode(secret).ok_or_else(malformed)?;
    Ok(Some((id, secret)))
}

/// Decodes one `application/x-www-form-urlencoded` component (`+` is a space, `%XX` a byte).
/// Unlike a full form parser it treats `&` and `=` as ordinary characters, and refuses broken
/// escapes instead of passing them through.
fn form_decode(input: &str) -> Option<String> {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                // from_str_radix alone would accept a sign ("%+1").
                if !hex.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
                out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::form_decode;

    #[test]
    fn basic_components_are_form_decoded() {
        assert_eq!(form_decode("a%3Ab+c").as_deref(), Some("a:b c"));
        assert_eq!(form_decode("x&y=z").as_deref(), Some("x&y=z"));
        assert_eq!(form_decode("bad%2"), None);
        assert_eq!(form_decode("bad%zz"), None);
        assert_eq!(form_decode("bad%+1"), None);
    }
}
