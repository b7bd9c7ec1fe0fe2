//! Standard Webhooks signatures (spec v1): `v1,` and base64 of HMAC-SHA256 over
//! `webhook-id.webhook-timestamp.body`, keyed with the secret's bytes. One entry per secret,
//! space-separated, so a receiver accepts during a secret's rotation.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::config::webhooks::SigningSecret;

/// The `webhook-signature` header for one attempt.
pub(crate) fn signature(
    secrets: &[SigningSecret],
    id: &str,
    timestamp: i64,
    body: &[u8],
) -> String {
    secrets
        .iter()
        .map(|secret| format!("v1,{}", one(secret.key(), id, timestamp, body)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn one(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes any key");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    STANDARD.encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectors of `../shared/docs/webhooks.md` §1.2: A from the spec's Rust library, B
    /// computed for that page.
    #[test]
    fn signs_the_reference_vectors() {
        let a: SigningSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD".parse().unwrap();
        assert_eq!(
            signature(
                &[a],
                "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
                1_649_367_553,
                br#"{"email":"test@example.com","username":"test_user"}"#
            ),
            "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="
        );
        let b: SigningSecret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
            .parse()
            .unwrap();
        let body = r#"{"type":"connection.created","timestamp":"2026-03-01T12:00:00Z","data":{"connection_id":"conn_01HZX3"}}"#;
        assert_eq!(
            signature(
                &[b.clone(), b],
                "evt_01HZX3K9Q2",
                1_772_366_400,
                body.as_bytes()
            ),
            "v1,yleTITzfDRXz5SQVrKwEAxyuomHLfRDCUJTOpKOALpo= v1,yleTITzfDRXz5SQVrKwEAxyuomHLfRDCUJTOpKOALpo="
        );
    }
}
