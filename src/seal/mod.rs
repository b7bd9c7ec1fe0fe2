//! Sealed values: XChaCha20-Poly1305 with a key ring, a purpose and an audience.
//!
//! Every value grantry hands to a client or browser and expects back (the MCP `requestState`,
//! the sign-in ticket in the connect link, the OAuth `state`, the CSRF token), and every secret
//! it stores (tokens at rest, the PKCE verifier), is sealed here.
//!
//! Wire form: `g1.` + base64url-nopad( key id (4) ‖ nonce (24) ‖ ciphertext ‖ tag (16) ).
//! The associated data binds the format version, the key id, the [`Purpose`], the audience
//! (the canonical MCP URL; not for values kept at rest, which must survive a new public URL)
//! and a caller-chosen binding (for a stored grant: its row key), so a value of one purpose,
//! deployment or row never opens as another. Cheap checks (length cap,
//! prefix, alphabet, known key id) run before any decryption.

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::XNonce;
use chacha20poly1305::aead::{Aead, Payload};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

mod keys;

pub use keys::{KeyRing, decode_key, generate_key};

const PREFIX: &str = "g1.";
const KEY_ID_LEN: usize = 4;
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;
/// Length of a key, in bytes.
pub(crate) const KEY_LEN: usize = 32;
/// Largest sealed value a client or browser may hand back, in characters. A `requestState`
/// rides in every retry, so what is sealed stays small; anything longer is refused before
/// decoding.
pub(crate) const MAX_SEALED_LEN: usize = 4096;
/// Largest sealed value kept at rest (provider tokens can be long JWTs).
pub(crate) const MAX_STORED_SEALED_LEN: usize = 64 * 1024;
/// Largest sealed task kept at rest: it holds its tool's whole answer (a page of invoices:
/// tens of KiB), and a person may keep a hundred.
pub(crate) const MAX_STORED_TASK_LEN: usize = 1024 * 1024;
/// Clock leeway for `iat` / `exp` checks, in seconds (replicas' clocks differ a little).
pub(crate) const CLOCK_LEEWAY_SECS: i64 = 60;

/// What a sealed value is for. Part of the associated data: a value sealed for one purpose
/// never opens as another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    RequestState,
    SignInTicket,
    OAuthState,
    CsrfToken,
    ConfirmState,
    FormState,
    AccountChoice,
    BrowserSession,
    LoginTransaction,
    StoredGrant,
    FlowSecret,
    DemoCode,
    DemoAccessToken,
    DemoRefreshToken,
    /// A task's work, kept at rest under its id's hash.
    StoredTask,
    /// A task's work as earlier builds sealed it, bound to the public URL: opened only, for
    /// the tasks they left (a task lives ten minutes by default); a later release drops it.
    TaskWorkBoundToUrl,
    /// What the "connected" page says of a sign-in that just ended: its account, and what the
    /// person does next.
    ConnectedPage,
}

impl Purpose {
    fn label(self) -> &'static str {
        match self {
            Purpose::RequestState => "request-state",
            Purpose::SignInTicket => "sign-in-ticket",
            Purpose::OAuthState => "oauth-state",
            Purpose::CsrfToken => "csrf-token",
            Purpose::ConfirmState => "confirm-state",
            Purpose::FormState => "form-state",
            Purpose::AccountChoice => "account-choice",
            Purpose::BrowserSession => "browser-session",
            Purpose::LoginTransaction => "login-transaction",
            Purpose::StoredGrant => "stored-grant",
            Purpose::FlowSecret => "flow-secret",
            Purpose::DemoCode => "demo-code",
            Purpose::DemoAccessToken => "demo-access-token",
            Purpose::DemoRefreshToken => "demo-refresh-token",
            Purpose::StoredTask => "stored-task",
            Purpose::TaskWorkBoundToUrl => "task-work",
            Purpose::ConnectedPage => "connected-page",
        }
    }

    /// Values kept at rest bind their row (the caller's binding), not the deployment's URL:
    /// a changed public URL must not orphan every stored grant. Values handed to clients and
    /// browsers bind the audience, so another deployment sharing a key cannot replay them.
    fn binds_audience(self) -> bool {
        !matches!(
            self,
            Purpose::StoredGrant | Purpose::FlowSecret | Purpose::StoredTask
        )
    }

    /// The longest value of this purpose that opens. [`Sealer::seal_bytes`] seals any length:
    /// a caller sealing what it does not bound checks this before it keeps the value.
    pub(crate) fn max_len(self) -> usize {
        match self {
            Purpose::StoredGrant | Purpose::FlowSecret => MAX_STORED_SEALED_LEN,
            Purpose::StoredTask | Purpose::TaskWorkBoundToUrl => MAX_STORED_TASK_LEN,
            _ => MAX_SEALED_LEN,
        }
    }
}

/// Why a value did not open. Callers log it and answer with one generic message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OpenError {
    #[error("sealed value too long")]
    TooLong,
    #[error("sealed value malformed")]
    Malformed,
    #[error("sealed value names an unknown key")]
    UnknownKey,
    #[error("sealed value failed authentication")]
    Forged,
    #[error("sealed value expired")]
    Expired,
    #[error("sealed value issued in the future")]
    NotYetValid,
}

/// Claims sealed with an issue time and an expiry.
#[derive(Serialize, serde::Deserialize)]
struct Timed<T> {
    iat: i64,
    exp: i64,
    #[serde(rename = "v")]
    value: T,
}

/// Seals and opens values for one deployment (its audience).
pub struct Sealer {
    ring: KeyRing,
    audience: String,
    /// The last value kept at rest that named a key the ring lacks: the store holds what
    /// this replica cannot open (`/readyz` says so). Values from clients do not count: anyone
    /// can send one naming any key.
    unopenable: Mutex<Option<(String, Instant)>>,
}

impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("ring", &self.ring)
            .field("audience", &self.audience)
            .finish()
    }
}

impl Sealer {
    pub fn new(ring: KeyRing, audience: impl Into<String>) -> Self {
        Self {
            ring,
            audience: audience.into(),
            unopenable: Mutex::new(None),
        }
    }

    /// The id of the key a value kept at rest named, which the ring lacks, if one was met
    /// within `window`.
    pub(crate) fn unopenable_key_within(&self, window: Duration) -> Option<String> {
        let met = self.unopenable.lock().unwrap_or_else(|p| p.into_inner());
        met.as_ref()
            .filter(|(_, at)| at.elapsed() < window)
            .map(|(key_id, _)| key_id.clone())
    }

    /// The id of the key `sealed` names, in hex, if it has the shape of a sealed value.
    pub(crate) fn key_id_of(sealed: &str) -> Option<String> {
        let body = sealed.strip_prefix(PREFIX)?;
        let head = body.get(..8)?;
        let raw = URL_SAFE_NO_PAD.decode(head).ok()?;
        Some(keys::hex_id(raw.get(..KEY_ID_LEN)?))
    }

    pub(crate) fn key_ring(&self) -> &KeyRing {
        &self.ring
    }

    fn aad(&self, key_id: &[u8], purpose: Purpose, binding: &[u8]) -> Vec<u8> {
        let mut aad = Vec::with_capacity(64 + self.audience.len() + binding.len());
        aad.extend_from_slice(PREFIX.as_bytes());
        aad.extend_from_slice(key_id);
        let audience = if purpose.binds_audience() {
            self.audience.as_bytes()
        } else {
            b""
        };
        for part in [purpose.label().as_bytes(), audience, binding] {
            aad.extend_from_slice(&(part.len() as u32).to_be_bytes());
            aad.extend_from_slice(part);
        }
        aad
    }

    /// Seals raw bytes under the current key.
    pub fn seal_bytes(&self, purpose: Purpose, binding: &[u8], plaintext: &[u8]) -> String {
        let key = &self.ring.keys[0];
        let nonce_bytes: [u8; NONCE_LEN] = rand::random();
        let nonce = XNonce::from(nonce_bytes);
        let aad = self.aad(&key.id, purpose, binding);
        let ciphertext = key
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext,
                    aad: &aad,
                },
            )
            .expect("XChaCha20-Poly1305 encryption of an in-memory buffer cannot fail");
        let mut raw = Vec::with_capacity(KEY_ID_LEN + NONCE_LEN + ciphertext.len());
        raw.extend_from_slice(&key.id);
        raw.extend_from_slice(&nonce_bytes);
        raw.extend_from_slice(&ciphertext);
        let mut out = String::with_capacity(PREFIX.len() + raw.len() * 4 / 3 + 4);
        out.push_str(PREFIX);
        URL_SAFE_NO_PAD.encode_string(&raw, &mut out);
        out
    }

    /// Opens bytes sealed by [`Sealer::seal_bytes`] with any key of the ring.
    pub(crate) fn open_bytes(
        &self,
        purpose: Purpose,
        binding: &[u8],
        sealed: &str,
    ) -> Result<Vec<u8>, OpenError> {
        self.open_bytes_with_key_id(purpose, binding, sealed)
            .map(|(plain, _)| plain)
    }

    /// Like [`Sealer::open_bytes`], and tells whether the value was sealed under an older key
    /// (so the caller can re-seal it on its next write).
    pub(crate) fn open_bytes_with_key_id(
        &self,
        purpose: Purpose,
        binding: &[u8],
        sealed: &str,
    ) -> Result<(Vec<u8>, bool), OpenError> {
        if sealed.len() > purpose.max_len() {
            return Err(OpenError::TooLong);
        }
        let body = sealed.strip_prefix(PREFIX).ok_or(OpenError::Malformed)?;
        if !body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(OpenError::Malformed);
        }
        let raw = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| OpenError::Malformed)?;
        if raw.len() < KEY_ID_LEN + NONCE_LEN + TAG_LEN {
            return Err(OpenError::Malformed);
        }
        let (key_id, rest) = raw.split_at(KEY_ID_LEN);
        let Some(key) = self.ring.find(key_id) else {
            if !purpose.binds_audience() {
                let met = (keys::hex_id(key_id), Instant::now());
                *self.unopenable.lock().unwrap_or_else(|p| p.into_inner()) = Some(met);
            }
            return Err(OpenError::UnknownKey);
        };
        let (nonce_bytes, ciphertext) = rest.split_at(NONCE_LEN);
        let nonce = XNonce::try_from(nonce_bytes).map_err(|_| OpenError::Malformed)?;
        let aad = self.aad(key_id, purpose, binding);
        let plain = key
            .cipher
            .decrypt(
                &nonce,
                Payload {
                    msg: ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| OpenError::Forged)?;
        let is_old_key = key.id != self.ring.keys[0].id;
        Ok((plain, is_old_key))
    }

    /// Seals `value` as JSON with an issue time of `now` and an expiry `ttl_secs` later.
    /// (Five inputs besides the sealer, each of which every caller chooses: bundling them would
    /// only move the same names into a struct literal.)
    pub fn seal_timed<T: Serialize>(
        &self,
        purpose: Purpose,
        binding: &[u8],
        value: &T,
        now: i64,
        ttl_secs: i64,
    ) -> String {
        let timed = Timed {
            iat: now,
            exp: now + ttl_secs,
            value,
        };
        let json = serde_json::to_vec(&timed).expect("claims serialize to JSON");
        self.seal_bytes(purpose, binding, &json)
    }

    /// Opens a value sealed by [`Sealer::seal_timed`], checking its times against `now` with
    /// [`CLOCK_LEEWAY_SECS`] of leeway either way.
    pub fn open_timed<T: DeserializeOwned>(
        &self,
        purpose: Purpose,
        binding: &[u8],
        sealed: &str,
        now: i64,
    ) -> Result<T, OpenError> {
        let plain = self.open_bytes(purpose, binding, sealed)?;
        let timed: Timed<T> = serde_json::from_slice(&plain).map_err(|_| OpenError::Malformed)?;
        if timed.iat > now + CLOCK_LEEWAY_SECS {
            return Err(OpenError::NotYetValid);
        }
        if now > timed.exp + CLOCK_LEEWAY_SECS {
            return Err(OpenError::Expired);
        }
        Ok(timed.value)
    }
}

/// SHA-256 of `parts`, each length-prefixed, as base64url: for hashes kept in place of secrets.
pub(crate) fn digest(domain: &str, parts: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    hasher.update((domain.len() as u32).to_be_bytes());
    hasher.update(domain.as_bytes());
    for part in parts {
        hasher.update((part.len() as u32).to_be_bytes());
        hasher.update(part);
    }
    URL_SAFE_NO_PAD.encode(hasher.finalize())
}

pub(crate) use grantry_base::random_id;

/// Constant-time equality for two strings of secrets' hashes.
pub(crate) fn constant_time_eq(a: &str, b: &str) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

#[cfg(test)]
mod tests;
