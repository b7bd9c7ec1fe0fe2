//! Where an export goes and how: the collector's `/v1/traces` URL, the headers it wants and
//! the time it gets, from `--otlp-endpoint` or the standard `OTEL_EXPORTER_OTLP_*` variables
//! (the signal's own `…_TRACES_…` variable before the general one, as the OpenTelemetry
//! specification orders them). A value grantry cannot honour is refused at start, naming the
//! variable, instead of exporting somewhere else or in a form the collector did not ask for.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::telemetry::Export;

/// The specification's default time for one export.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The only protocol grantry exports in.
const PROTOCOL: &str = "http/protobuf";

/// One collector, as resolved at start.
pub(super) struct Destination {
    /// Where spans are posted: the signal's URL as given, or a base URL with `/v1/traces`.
    pub(crate) url: reqwest::Url,
    /// Headers the collector asked for (credentials, often): never logged.
    pub(crate) headers: HeaderMap,
    /// How long one export may take.
    pub(crate) timeout: Duration,
}

/// The collector's host only: its URL may carry credentials, its headers do.
impl std::fmt::Debug for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Destination")
            .field("collector", &self.url.host_str())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Destination {
    /// The destination `export` names, the variables read through `variable`.
    pub(super) fn resolve(
        export: &Export,
        variable: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        // The signal's own variable before the general one; an empty value is unset.
        let either = |name: &str| {
            let traces = name.replacen("OTEL_EXPORTER_OTLP_", "OTEL_EXPORTER_OTLP_TRACES_", 1);
            [traces, name.to_owned()].into_iter().find_map(|name| {
                let value = variable(&name)?;
                (!value.trim().is_empty()).then(|| (name, value.trim().to_owned()))
            })
        };
        let url = match export {
            Export::Endpoint(base) => traces_under(base.as_str(), "--otlp-endpoint")?,
            Export::FromEnvironment => endpoint_from(either("OTEL_EXPORTER_OTLP_ENDPOINT"))?,
        };
        // The flag names an OTLP/HTTP collector itself: a protocol set for other programs
        // sharing the environment does not stop grantry.
        if let Some((name, protocol)) = either("OTEL_EXPORTER_OTLP_PROTOCOL")
            && matches!(export, Export::FromEnvironment)
            && !protocol.eq_ignore_ascii_case(PROTOCOL)
        {
            return Err(format!(
                "{name}: grantry exports {PROTOCOL} only, not {protocol:?}"
            ));
        }
        if let Some((name, compression)) = either("OTEL_EXPORTER_OTLP_COMPRESSION")
            && !compression.eq_ignore_ascii_case("none")
        {
            return Err(format!(
                "{name}: grantry sends traces uncompressed; {compression:?} is not supported"
            ));
        }
        for unsupported in ["CERTIFICATE", "CLIENT_KEY", "CLIENT_CERTIFICATE"] {
            if let Some((name, _)) = either(&format!("OTEL_EXPORTER_OTLP_{unsupported}")) {
                return Err(format!(
                    "{name}: grantry verifies the collector with the system's roots and \
                     presents no client certificate; unset it"
                ));
            }
        }
        let headers = match either("OTEL_EXPORTER_OTLP_HEADERS") {
            Some((name, list)) => headers(&list).map_err(|why| format!("{name}: {why}"))?,
            None => HeaderMap::new(),
        };
        let timeout = match either("OTEL_EXPORTER_OTLP_TIMEOUT") {
            Some((name, millis)) => match millis.parse() {
                Ok(0) | Err(_) => {
                    return Err(format!(
                        "{name}: {millis:?} is not a positive whole number of milliseconds"
                    ));
                }
                Ok(millis) => Duration::from_millis(millis),
            },
            None => DEFAULT_TIMEOUT,
        };
        Ok(Self {
            url,
            headers,
            timeout,
        })
    }
}

/// The traces URL from the variable that named it: the signal's own as it is, the general
/// one with `/v1/traces`.
fn endpoint_from(named: Option<(String, String)>) -> Result<reqwest::Url, String> {
    match named {
        Some((name, url)) if name.contains("_TRACES_") => http_url(&url, &name),
        Some((name, base)) => traces_under(&base, &name),
        None => Err(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT: \
                     neither names a collector"
                .to_owned(),
        ),
    }
}

/// `/v1/traces` under a collector's base URL (after its path, as the specification appends
/// it: `http://c:4318/otel` gives `http://c:4318/otel/v1/traces`).
fn traces_under(base: &str, named: &str) -> Result<reqwest::Url, String> {
    let mut url = http_url(base, named)?;
    let path = format!("{}/v1/traces", url.path().trim_end_matches('/'));
    url.set_path(&path);
    Ok(url)
}

/// An http(s) URL; an error names the setting, never the URL (it may hold credentials).
fn http_url(text: &str, named: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(text).map_err(|e| format!("{named}: not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{named}: not an http or https URL"));
    }
    Ok(url)
}

/// `key=value,key=value`, each value percent-decoded (the specification's format, W3C
/// Baggage's): an entry that does not make a header is refused by its place in the list
/// (its text may be a credential written wrong). Values are marked sensitive.
fn headers(list: &str) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    let entries = list.split(',').map(str::trim).filter(|e| !e.is_empty());
    for (place, entry) in entries.enumerate().map(|(i, e)| (i + 1, e)) {
        let Some((key, value)) = entry.split_once('=') else {
            return Err(format!("entry {place} is not key=value"));
        };
        let name = HeaderName::from_bytes(key.trim().as_bytes())
            .map_err(|_| format!("entry {place} does not start with a header name"))?;
        let mut value = percent_encoding::percent_decode_str(value.trim())
            .decode_utf8()
            .ok()
            .and_then(|v| HeaderValue::from_str(&v).ok())
            .ok_or_else(|| format!("entry {place} has no valid header value"))?;
        value.set_sensitive(true);
        headers.append(name, value);
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn resolve(export: &Export, variables: &[(&str, &str)]) -> Result<Destination, String> {
        let variables: HashMap<String, String> = variables
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Destination::resolve(export, |name| variables.get(name).cloned())
    }

    fn from_flag(base: &str) -> Export {
        Export::Endpoint(base.parse().unwrap())
    }

    #[test]
    fn the_traces_path_goes_after_the_base_urls_own() {
        for (base, url) in [
            ("http://collector:4318", "http://collector:4318/v1/traces"),
            ("http://collector:4318/", "http://collector:4318/v1/traces"),
            ("https://c.example/otel", "https://c.example/otel/v1/traces"),
            (
                "https://c.example/otel/",
                "https://c.example/otel/v1/traces",
            ),
        ] {
            assert_eq!(resolve(&from_flag(base), &[]).unwrap().url.as_str(), url);
            let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", base)];
            let resolved = resolve(&Export::FromEnvironment, &env).unwrap();
            assert_eq!(resolved.url.as_str(), url);
        }
    }

    #[test]
    fn the_signals_own_variables_come_first_and_the_flag_before_both() {
        let env = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://general:4318"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://traces:4318/custom",
            ),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-general=1"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-traces=2"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "100"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2500"),
        ];
        let resolved = resolve(&Export::FromEnvironment, &env).unwrap();
        assert_eq!(resolved.url.as_str(), "http://traces:4318/custom");
        assert_eq!(resolved.headers.len(), 1);
        assert_eq!(resolved.headers["x-traces"], "2");
        assert_eq!(resolved.timeout, Duration::from_millis(2500));
        let flagged = resolve(&from_flag("http://flag:4318"), &env).unwrap();
        assert_eq!(flagged.url.as_str(), "http://flag:4318/v1/traces");
        let plain = resolve(&from_flag("http://flag:4318"), &[]).unwrap();
        assert_eq!(plain.timeout, DEFAULT_TIMEOUT);
        assert!(plain.headers.is_empty());
    }

    #[test]
    fn header_values_are_percent_decoded() {
        let env = [(
            "OTEL_EXPORTER_OTLP_HEADERS",
            " authorization=Basic%20dXNlcjpwdw== , x-tenant = acme ",
        )];
        let resolved = resolve(&from_flag("http://c:4318"), &env).unwrap();
        assert_eq!(resolved.headers["authorization"], "Basic dXNlcjpwdw==");
        assert_eq!(resolved.headers["x-tenant"], "acme");
    }

    #[test]
    fn what_grantry_cannot_honour_is_refused_naming_the_variable() {
        let collector = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        for (variable, value, says) in [
            (
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                "grpc",
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: grantry exports http/protobuf only",
            ),
            (
                "OTEL_EXPORTER_OTLP_PROTOCOL",
                "http/json",
                "OTEL_EXPORTER_OTLP_PROTOCOL: grantry exports http/protobuf only",
            ),
            (
                "OTEL_EXPORTER_OTLP_COMPRESSION",
                "gzip",
                "OTEL_EXPORTER_OTLP_COMPRESSION: grantry sends traces uncompressed",
            ),
            (
                "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
                "/etc/ca.pem",
                "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE: grantry verifies the collector",
            ),
            (
                "OTEL_EXPORTER_OTLP_TIMEOUT",
                "10s",
                "OTEL_EXPORTER_OTLP_TIMEOUT: \"10s\" is not a positive whole number",
            ),
            (
                "OTEL_EXPORTER_OTLP_TIMEOUT",
                "0",
                "OTEL_EXPORTER_OTLP_TIMEOUT: \"0\" is not a positive whole number",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "x-tenant=acme,authorization:Basic secret-value",
                "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value",
            ),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "bad secret-value=x",
                "OTEL_EXPORTER_OTLP_HEADERS: entry 1 does not start with a header name",
            ),
        ] {
            let refused =
                resolve(&Export::FromEnvironment, &[collector, (variable, value)]).unwrap_err();
            assert!(refused.starts_with(says), "{refused}");
            assert!(!refused.contains("secret-value"), "{refused}");
        }
    }

    #[test]
    fn endpoints_are_refused_without_being_shown_and_spellings_are_read_in_any_case() {
        let collector = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318");
        for endpoint in ["ftp://user:secret-value@c/", "collector:4318"] {
            let env = [("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint)];
            let refused = resolve(&Export::FromEnvironment, &env).unwrap_err();
            assert!(refused.contains("not an http or https URL"), "{refused}");
            assert!(!refused.contains("secret-value"), "{refused}");
        }
        let fine = [
            collector,
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "HTTP/Protobuf"),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "None"),
        ];
        assert!(resolve(&Export::FromEnvironment, &fine).is_ok());
        // The flag names an OTLP/HTTP collector: another program's protocol does not matter.
        let grpc = [("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")];
        assert!(resolve(&from_flag("http://c:4318"), &grpc).is_ok());
    }

    #[test]
    fn header_values_and_credentials_in_the_url_are_never_shown() {
        let env = [("OTEL_EXPORTER_OTLP_HEADERS", "authorization=secret-value")];
        let resolved = resolve(&from_flag("http://user:secret-url@c:4318"), &env).unwrap();
        let shown = format!("{resolved:?} {:?}", resolved.headers);
        assert!(
            !shown.contains("secret-value") && !shown.contains("secret-url"),
            "{shown}"
        );
    }
}
