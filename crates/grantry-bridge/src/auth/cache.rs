//! The token cache: one file per server URL in the user's config directory, 0600 in a 0700
//! directory. A file that cannot be read as tokens is treated as absent (and replaced by
//! the next authorization).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::client::Client;
use sha2::{Digest as _, Sha256};
use url::Url;

/// What the bridge keeps for one server: the client it registered (or was given) and the
/// tokens of the last authorization.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Tokens {
    /// Flat, as `client_id` (and the secret and method, where there are some): files written
    /// before confidential clients read as public clients.
    #[serde(flatten)]
    pub(crate) client: Client,
    pub(crate) token_endpoint: Url,
    pub(crate) resource: String,
    pub(crate) access_token: String,
    pub(crate) refresh_token: Option<String>,
    /// Unix seconds.
    pub(crate) expires_at: Option<i64>,
    /// The scopes asked for (a step-up asks for them again, with the new ones).
    #[serde(default)]
    pub(crate) scope: Option<String>,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("client", &self.client)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

pub(crate) struct TokenCache {
    path: PathBuf,
}

impl TokenCache {
    /// The cache file for `server` under `dir`.
    pub(crate) fn new(dir: &Path, server: &Url) -> Self {
        let digest = Sha256::digest(server.as_str().as_bytes());
        let name = hex::encode(&digest[..16]);
        Self {
            path: dir.join(format!("{name}.json")),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn load(&self) -> Option<Tokens> {
        let text = std::fs::read(&self.path).ok()?;
        match serde_json::from_slice(&text) {
            Ok(tokens) => Some(tokens),
            Err(_) => {
                tracing::warn!(path = %self.path.display(), "the token cache is unreadable; authorizing again");
                None
            }
        }
    }

    pub(crate) fn store(&self, tokens: &Tokens) -> std::io::Result<()> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        // A directory made here is 0700; one that exists (perhaps the user's own) keeps its
        // mode: the file itself is 0600.
        if !dir.exists() {
            grantry_base::private_files::prepare(dir)?;
        }
        // Written beside, then renamed: a reader never sees half a file.
        let partial = self.path.with_extension("json.partial");
        let _ = std::fs::remove_file(&partial);
        grantry_base::private_files::private_file(&partial)?;
        let mut file = std::fs::OpenOptions::new().write(true).open(&partial)?;
        let kept = Tokens {
            client: tokens.client.to_keep(),
            ..tokens.clone()
        };
        file.write_all(&serde_json::to_vec(&kept).map_err(std::io::Error::other)?)?;
        file.sync_all()?;
        std::fs::rename(&partial, &self.path)
    }
}

/// The default cache directory: the platform's per-user config directory.
pub(crate) fn default_dir() -> Option<PathBuf> {
    let env = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = if cfg!(windows) {
        env("APPDATA")
    } else if cfg!(target_os = "macos") {
        env("HOME").map(|home| home.join("Library/Application Support"))
    } else {
        env("XDG_CONFIG_HOME").or_else(|| env("HOME").map(|home| home.join(".config")))
    };
    base.map(|base| base.join("grantry").join("bridge"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn tokens_are_kept_private_and_a_damaged_file_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let cache_dir = dir.path().join("bridge");
        let server = Url::parse("https://connector.example.com/mcp").unwrap();
        let cache = TokenCache::new(&cache_dir, &server);
        assert!(cache.load().is_none());
        let tokens = Tokens {
            client: serde_json::from_value(
                serde_json::json!({"client_id": "c", "client_secret": "secret-client"}),
            )
            .unwrap(),
            token_endpoint: Url::parse("https://id.example.com/token").unwrap(),
            resource: server.to_string(),
            access_token: "secret-access".into(),
            refresh_token: Some("secret-refresh".into()),
            expires_at: Some(1),
            scope: None,
        };
        cache.store(&tokens).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(cache.path()), 0o600);
        assert_eq!(mode(&cache_dir), 0o700);
        assert_eq!(cache.load().unwrap().access_token, "secret-access");
        assert!(!format!("{tokens:?}").contains("secret"));
        std::fs::write(cache.path(), b"{not json").unwrap();
        assert!(cache.load().is_none());
    }

    #[test]
    fn a_configured_secret_is_not_kept_and_the_configuration_of_now_applies() {
        use super::super::client::Choice;
        use crate::args::ClientSecret;
        let dir = tempfile::tempdir().unwrap();
        let server = Url::parse("https://connector.example.com/mcp").unwrap();
        let cache = TokenCache::new(dir.path(), &server);
        let choice = |id: &str, secret: &str| Choice {
            client_id: Some(id.into()),
            secret: Some(ClientSecret::new(secret.into())),
            metadata_url: None,
        };
        let post = serde_json::json!({"client_id": "c",
            "token_endpoint_auth_method": "client_secret_post"});
        let configured = serde_json::from_value::<Client>(post)
            .unwrap()
            .into_chosen(&choice("c", "secret-before"))
            .unwrap();
        let tokens = Tokens {
            client: configured,
            token_endpoint: Url::parse("https://id.example.com/token").unwrap(),
            resource: server.to_string(),
            access_token: "access".into(),
            refresh_token: Some("refresh".into()),
            expires_at: None,
            scope: None,
        };
        cache.store(&tokens).unwrap();
        let on_disk = std::fs::read_to_string(cache.path()).unwrap();
        assert!(!on_disk.contains("secret-before"), "{on_disk}");

        // The secret file rotated: the kept tokens refresh with the new secret.
        let kept = cache.load().unwrap().client;
        let rotated = kept
            .clone()
            .into_chosen(&choice("c", "secret-after"))
            .unwrap();
        let form = rotated
            .token_request(&super::super::fake::http(), &tokens.token_endpoint, &[])
            .build()
            .unwrap();
        let sent = String::from_utf8_lossy(form.body().unwrap().as_bytes().unwrap()).into_owned();
        assert!(sent.contains("secret-after"), "{sent}");
        // Another client configured now: the kept tokens are not its.
        assert!(kept.clone().into_chosen(&choice("other", "s")).is_none());
        // None configured now: the kept client's secret is gone with its configuration.
        assert!(kept.into_chosen(&Choice::default()).is_none());
    }
}
