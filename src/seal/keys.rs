//! The key ring: the keys that seal and open, each known by a short non-secret id.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::XChaCha20Poly1305;
use chacha20poly1305::aead::KeyInit;
use sha2::{Digest, Sha256};

use super::{KEY_ID_LEN, KEY_LEN};

/// A configuration problem with the keys.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("a key must be {KEY_LEN} bytes in base64url (43 characters), got {0} bytes")]
    WrongLength(usize),
    #[error("a key is not valid base64url")]
    NotBase64,
    #[error("the key ring is empty")]
    Empty,
    #[error("two keys in the ring share the key id {0}")]
    DuplicateId(String),
}

/// One key of the ring. Its id is a non-secret fingerprint of the key.
pub(super) struct RingKey {
    pub(super) id: [u8; KEY_ID_LEN],
    pub(super) cipher: XChaCha20Poly1305,
}

/// The key ring: the first key seals, every key opens.
pub struct KeyRing {
    pub(super) keys: Vec<RingKey>,
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<String> = self.keys.iter().map(|k| hex_id(&k.id)).collect();
        f.debug_struct("KeyRing").field("key_ids", &ids).finish()
    }
}

pub(super) fn hex_id(id: &[u8]) -> String {
    hex::encode(id)
}

/// A fresh random key, base64url encoded (what `grantry keys generate` prints). Keys that
/// would start with `-` are drawn again: a command line would read one as a flag.
pub fn generate_key() -> String {
    loop {
        let key = URL_SAFE_NO_PAD.encode(rand::random::<[u8; KEY_LEN]>());
        if !key.starts_with('-') {
            return key;
        }
    }
}

impl KeyRing {
    /// Builds a ring from raw keys; the first one seals.
    pub fn from_keys(keys: &[[u8; KEY_LEN]]) -> Result<Self, KeyError> {
        if keys.is_empty() {
            return Err(KeyError::Empty);
        }
        let mut ring = Vec::with_capacity(keys.len());
        for key in keys {
            let id = key_id(key);
            if ring.iter().any(|k: &RingKey| k.id == id) {
                return Err(KeyError::DuplicateId(hex_id(&id)));
            }
            ring.push(RingKey {
                id,
                cipher: XChaCha20Poly1305::new(&(*key).into()),
            });
        }
        Ok(Self { keys: ring })
    }

    /// Builds a ring from base64url keys as they appear in configuration.
    pub fn from_encoded<S: AsRef<str>>(keys: &[S]) -> Result<Self, KeyError> {
        let raw = keys
            .iter()
            .map(|k| decode_key(k.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        Self::from_keys(&raw)
    }

    /// The id of the sealing key, in hex (safe to log).
    pub fn current_key_id(&self) -> String {
        hex_id(&self.keys[0].id)
    }

    /// The ids of every key in the ring, sealing key first, in hex.
    pub(crate) fn key_ids(&self) -> Vec<String> {
        self.keys.iter().map(|k| hex_id(&k.id)).collect()
    }

    pub(super) fn find(&self, id: &[u8]) -> Option<&RingKey> {
        self.keys.iter().find(|k| k.id == id)
    }
}

/// Decodes one base64url key (padding tolerated) and checks its length.
pub fn decode_key(encoded: &str) -> Result<[u8; KEY_LEN], KeyError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(encoded.trim().trim_end_matches('='))
        .map_err(|_| KeyError::NotBase64)?;
    <[u8; KEY_LEN]>::try_from(bytes.as_slice()).map_err(|_| KeyError::WrongLength(bytes.len()))
}

fn key_id(key: &[u8; KEY_LEN]) -> [u8; KEY_ID_LEN] {
    let digest = Sha256::new()
        .chain_update(b"grantry/key-id/v1:")
        .chain_update(key)
        .finalize();
    let mut id = [0u8; KEY_ID_LEN];
    id.copy_from_slice(&digest[..KEY_ID_LEN]);
    id
}
