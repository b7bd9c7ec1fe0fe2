//! The webhook endpoints lifecycle events go to (`--webhook-url NAME=URL`), each with its own
//! Standard Webhooks secret from the environment (`GRANTRY_WEBHOOK_SECRET_<NAME>`), and the
//! retry schedule.

use std::str::FromStr;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use secrecy::{ExposeSecret as _, SecretSlice};
use url::Url;

use super::ConfigError;

/// An endpoint's name: 1-32 characters of a-z, 0-9, `-` and `_`. It names the endpoint in the
/// outbox (so a URL can change without losing what is queued) and its secret's variable.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct EndpointName(String);

impl EndpointName {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// The environment variable holding its secret(s).
    pub(crate) fn secret_variable(&self) -> String {
        format!(
            "GRANTRY_WEBHOOK_SECRET_{}",
            self.0.to_ascii_uppercase().replace('-', "_")
        )
    }
}

impl FromStr for EndpointName {
    type Err = String;
    fn from_str(name: &str) -> Result<Self, String> {
        let allowed =
            |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_';
        if (1..=32).contains(&name.len()) && name.bytes().all(allowed) {
            Ok(Self(name.to_owned()))
        } else {
            // Not repeated: what stands before the first `=` may be a URL with a password.
            Err("an endpoint is NAME=URL, its NAME 1-32 characters of a-z, 0-9, - and _".into())
        }
    }
}

/// `NAME=URL` as given to `--webhook-url`: https, or http to a loopback address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EndpointTarget {
    pub(crate) name: EndpointName,
    pub(crate) url: Url,
}

impl FromStr for EndpointTarget {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let (name, url) = text
            .split_once('=')
            .ok_or_else(|| "an endpoint is not NAME=URL".to_owned())?;
        let name: EndpointName = name.trim().parse()?;
        let url = Url::parse(url.trim()).map_err(|e| format!("{}: not a URL: {e}", name.0))?;
        let loopback = grantry_base::net::is_loopback(&url);
        if url.scheme() != "https" && !(url.scheme() == "http" && loopback) {
            return Err(format!(
                "{}: must be https (plain http only to a loopback address)",
                name.0
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(format!("{}: must not carry credentials", name.0));
        }
        Ok(Self { name, url })
    }
}

/// A Standard Webhooks signing secret: `whsec_` and base64 of 24 to 64 random bytes. Its
/// `Debug` never shows it.
#[derive(Clone, Debug)]
pub(crate) struct SigningSecret(SecretSlice<u8>);

impl SigningSecret {
    pub(crate) fn key(&self) -> &[u8] {
        self.0.expose_secret()
    }
}

impl FromStr for SigningSecret {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let encoded = text
            .strip_prefix("whsec_")
            .ok_or("does not start with `whsec_`")?;
        let key = STANDARD
            .decode(encoded)
            .map_err(|_| "is not `whsec_` followed by base64")?;
        if !(24..=64).contains(&key.len()) {
            return Err(format!(
                "holds {} bytes; a secret is 24 to 64 random bytes",
                key.len()
            ));
        }
        Ok(Self(key.into()))
    }
}

/// One endpoint, ready to sign for: every delivery carries a `v1` signature with each secret
/// (several while a secret is being rotated).
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    pub(crate) name: EndpointName,
    pub(crate) url: Url,
    pub(crate) secrets: Vec<SigningSecret>,
}

/// The endpoints of `targets`, each with its secrets read through `var` (the environment):
/// one or more `whsec_` secrets separated by spaces. A missing or malformed secret, or a
/// name given twice, is refused.
pub(crate) fn resolve(
    targets: &[EndpointTarget],
    var: impl Fn(&str) -> Option<String>,
) -> Result<Vec<Endpoint>, ConfigError> {
    let mut endpoints: Vec<Endpoint> = Vec::new();
    for target in targets {
        let variable = target.name.secret_variable();
        let bad = |why: String| super::bad("--webhook-url (GRANTRY_WEBHOOK_URL)", why);
        if endpoints.iter().any(|e| e.name == target.name) {
            return Err(bad(format!("the name `{}` is given twice", target.name.0)));
        }
        let text = var(&variable)
            .ok_or_else(|| bad(format!("{}: set its secret in {variable}", target.name.0)))?;
        let secrets = text
            .split_whitespace()
            .map(|s| {
                s.parse::<SigningSecret>()
                    .map_err(|why| bad(format!("{variable} {why}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if secrets.is_empty() {
            return Err(bad(format!("{variable} is empty")));
        }
        endpoints.push(Endpoint {
            name: target.name.clone(),
            url: target.url.clone(),
            secrets,
        });
    }
    Ok(endpoints)
}

/// Seconds between delivery attempts, comma-separated: after the last, a delivery is parked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RetrySchedule(pub Vec<Duration>);

/// The Standard Webhooks example schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h,
/// 24 h: ten attempts over about three days.
pub(crate) const DEFAULT_RETRY_SCHEDULE: &str = "5,300,1800,7200,18000,36000,50400,72000,86400";

impl FromStr for RetrySchedule {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let delays = text
            .split(',')
            .map(str::trim)
            .map(|item| match item.parse::<u64>() {
                Ok(secs) if (1..=604_800).contains(&secs) => Ok(Duration::from_secs(secs)),
                _ => Err(format!(
                    "`{item}` is not a delay in seconds between 1 and 604800"
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if delays.len() > 30 {
            return Err("at most 30 retries".into());
        }
        Ok(Self(delays))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_must_be_https_or_loopback_http() {
        assert!(
            "ops=https://hooks.example/g"
                .parse::<EndpointTarget>()
                .is_ok()
        );
        assert!("ops=http://127.0.0.1:9/g".parse::<EndpointTarget>().is_ok());
        for refused in [
            "ops=http://hooks.example/g",
            "https://hooks.example/g",
            "Ops=https://hooks.example/g",
            "ops=https://user:pw@hooks.example/g",
            "ops=ftp://hooks.example/g",
        ] {
            assert!(refused.parse::<EndpointTarget>().is_err(), "{refused}");
        }
    }

    #[test]
    fn secrets_are_whsec_base64_of_24_to_64_bytes() {
        let secret: SigningSecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD".parse().unwrap();
        assert_eq!(secret.key().len(), 24);
        let debug = format!("{secret:?}");
        let first_bytes = format!("{:?}", &secret.key()[..2]);
        assert!(debug.contains("[REDACTED]"), "{debug}");
        assert!(!debug.contains("C2FV") && !debug.contains(first_bytes.trim_end_matches(']')));
        for refused in [
            "C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
            "whsec_???",
            "whsec_AAAA",
        ] {
            assert!(refused.parse::<SigningSecret>().is_err(), "{refused}");
        }
    }

    #[test]
    fn every_endpoint_needs_its_secret() {
        let targets = vec!["ops-1=https://a.example/".parse().unwrap()];
        let secret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
        let found = resolve(&targets, |v| {
            (v == "GRANTRY_WEBHOOK_SECRET_OPS_1").then(|| format!("{secret} {secret}"))
        })
        .unwrap();
        assert_eq!(found[0].secrets.len(), 2);
        let missing = resolve(&targets, |_| None).unwrap_err().to_string();
        assert!(
            missing.contains("GRANTRY_WEBHOOK_SECRET_OPS_1"),
            "{missing}"
        );
        let twice = vec![targets[0].clone(), targets[0].clone()];
        assert!(resolve(&twice, |_| Some(secret.into())).is_err());
    }

    #[test]
    fn retry_schedules_are_bounded() {
        let default: RetrySchedule = DEFAULT_RETRY_SCHEDULE.parse().unwrap();
        let total: u64 = default.0.iter().map(Duration::as_secs).sum();
        assert!(total > 86_400, "retried for at least a day");
        assert!("0".parse::<RetrySchedule>().is_err());
        assert!("5,x".parse::<RetrySchedule>().is_err());
    }
}
