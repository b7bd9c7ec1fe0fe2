//! What the demo's sealed codes and tokens carry, PKCE, and the single-use set of codes.
//!
//! Codes and tokens are sealed claims, so any process holding the key can check them without a
//! store. Only "this code was already redeemed" needs memory; that lives in [`ConsumedCodes`],
//! per process (see the module docs of `demo`).

use std::collections::HashMap;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::seal::CLOCK_LEEWAY_SECS;

/// Lifetime of an authorization code, in seconds (RFC 6749 §4.1.2 recommends at most 10 min).
pub(super) const CODE_TTL_SECS: i64 = 60;
/// Lifetime of a refresh token, in seconds.
pub(super) const REFRESH_TOKEN_TTL_SECS: i64 = 30 * 24 * 3600;
/// How often, at most, the consumed-code set is swept of entries that can no longer matter.
const PRUNE_EVERY_SECS: i64 = 10;
/// Redeemed codes remembered at once (each for about a minute). Forgetting one early would let
/// it be redeemed again, so past this, redemptions are refused until older ones lapse.
pub(super) const MAX_REMEMBERED_CODES: usize = 100_000;

/// What an authorization code carries.
#[derive(Serialize, Deserialize)]
pub(super) struct CodeClaims {
    /// Random 128-bit id: the key of the single-use check.
    pub(crate) id: String,
    pub(crate) client_id: String,
    pub(crate) redirect_uri: String,
    pub(crate) code_challenge: String,
    pub(crate) user: String,
    pub(crate) scope: String,
    /// Expiry (unix seconds), repeated here so the single-use set knows how long to remember
    /// the id; the sealer checks its own copy.
    pub(crate) exp: i64,
}

/// What an access or refresh token carries (the purpose tells them apart).
#[derive(Serialize, Deserialize)]
pub(super) struct TokenClaims {
    pub(crate) user: String,
    pub(crate) scope: String,
    pub(crate) client_id: String,
}

/// The S256 code challenge of `verifier`: base64url-nopad(SHA-256(verifier)), RFC 7636 §4.2.
pub(super) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// RFC 7636 §4.1: 43 to 128 characters of `[A-Za-z0-9-._~]` (a challenge has the same form).
pub(super) fn is_pkce_value(value: &str) -> bool {
    (43..=128).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// What [`ConsumedCodes::consume`] made of a code.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Consumption {
    /// First use: it is used up now.
    First,
    /// It was redeemed before.
    Replayed,
    /// Too many codes were redeemed within their lifetime to remember one more.
    Full,
}

/// Ids of codes already redeemed, each with the time after which it can be forgotten.
#[derive(Default)]
pub(super) struct ConsumedCodes {
    ids: HashMap<String, i64>,
    next_prune: i64,
}

impl ConsumedCodes {
    /// Marks the code `id` (expiring at `exp`) as used, if it was not and there is room.
    pub(super) fn consume(&mut self, id: &str, exp: i64, now: i64) -> Consumption {
        // Sweeping on a timer rather than on every call keeps redemption O(1) under load.
        if now >= self.next_prune || self.ids.len() >= MAX_REMEMBERED_CODES {
            self.ids.retain(|_, forget_at| *forget_at >= now);
            self.next_prune = now + PRUNE_EVERY_SECS;
        }
        if self.ids.contains_key(id) {
            return Consumption::Replayed;
        }
        if self.ids.len() >= MAX_REMEMBERED_CODES {
            return Consumption::Full;
        }
        // The sealer accepts a code until `exp` plus the leeway; remember it at least that long.
        self.ids.insert(id.to_owned(), exp + CLOCK_LEEWAY_SECS + 1);
        Consumption::First
    }

    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }
}
