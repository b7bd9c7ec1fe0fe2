//! The query a provider or the issuer sends the browser back with (`/oauth/callback`,
//! `/login/callback`), read strictly: each parameter at most once, none over a bounded length.

/// The callback's query, each parameter at most once.
#[derive(Default)]
pub(super) struct CallbackQuery {
    pub(crate) state: Option<String>,
    pub(crate) code: Option<String>,
    pub(crate) error: Option<String>,
    pub(crate) iss: Option<String>,
    /// QuickBooks: the company connected.
    pub(crate) realm_id: Option<String>,
    /// Zoho: the data centre the account lives in.
    pub(crate) accounts_server: Option<String>,
}

const MAX_PARAM_LEN: usize = 2048;

pub(super) fn parse_query(raw: Option<&str>) -> Option<CallbackQuery> {
    let mut q = CallbackQuery::default();
    for (name, value) in url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes()) {
        if value.len() > MAX_PARAM_LEN {
            return None;
        }
        let slot = match name.as_ref() {
            "state" => &mut q.state,
            "code" => &mut q.code,
            "error" => &mut q.error,
            "iss" => &mut q.iss,
            "realmId" => &mut q.realm_id,
            "accounts-server" => &mut q.accounts_server,
            _ => continue,
        };
        if slot.replace(value.into_owned()).is_some() {
            return None; // a repeated parameter is an attack or a broken provider
        }
    }
    Some(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_or_oversized_parameters_are_refused() {
        assert!(parse_query(Some("state=a&state=b")).is_none());
        assert!(parse_query(Some(&format!("state={}", "x".repeat(3000)))).is_none());
        let q = parse_query(Some("state=s&code=c&iss=i&other=ignored")).unwrap();
        assert_eq!(
            (q.state.as_deref(), q.code.as_deref()),
            (Some("s"), Some("c"))
        );
    }
}
