//! The demo's scopes: which exist, what the consent page says about them, and how a requested
//! scope string (space-delimited, RFC 6749 §3.3) is checked and normalized.

use super::{DEMO_SCOPE, DEMO_WRITE_SCOPE};

/// The requested scopes, de-duplicated, if every one is known; `None` if any is not, or if
/// none is given.
pub(super) fn normalize(requested: &str) -> Option<String> {
    let mut scopes: Vec<&str> = Vec::new();
    for scope in requested.split(' ').filter(|s| !s.is_empty()) {
        if scope != DEMO_SCOPE && scope != DEMO_WRITE_SCOPE {
            return None;
        }
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// `requested` normalized, if it asks for nothing beyond `granted` (RFC 6749 §6: a refresh
/// may narrow the scope, never widen it).
pub(super) fn narrow(requested: &str, granted: &str) -> Option<String> {
    let granted: Vec<&str> = granted.split(' ').collect();
    let within = requested
        .split(' ')
        .filter(|s| !s.is_empty())
        .all(|s| granted.contains(&s));
    normalize(requested).filter(|_| within)
}

/// `scope` (normalized) without write access: what "Allow reading only" grants; `None`
/// when the request asks for no reading and no writing both (then there is no such choice).
pub(super) fn read_only(scope: &str) -> Option<String> {
    let asked: Vec<&str> = scope.split(' ').filter(|s| !s.is_empty()).collect();
    if !asked.contains(&DEMO_SCOPE) || !asked.contains(&DEMO_WRITE_SCOPE) {
        return None;
    }
    let kept: Vec<&str> = asked
        .into_iter()
        .filter(|s| *s != DEMO_WRITE_SCOPE)
        .collect();
    Some(kept.join(" "))
}

/// What the consent page says a scope allows.
pub(super) fn description(scope: &str) -> &'static str {
    match scope {
        DEMO_SCOPE => "read your invoices (number, customer, amount, status and dates)",
        DEMO_WRITE_SCOPE => "create invoices and void them",
        _ => "an unknown permission",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_only_drops_write_access() {
        let read = Some("invoices:read".to_owned());
        assert_eq!(read_only("invoices:read invoices:write"), read);
        assert_eq!(read_only("invoices:write invoices:read"), read);
        assert_eq!(read_only("invoices:read"), None, "nothing to narrow");
        assert_eq!(
            read_only("invoices:write"),
            None,
            "never a scope not asked for"
        );
    }

    #[test]
    fn scopes_are_checked_and_normalized() {
        assert_eq!(normalize("invoices:read").as_deref(), Some("invoices:read"));
        assert_eq!(
            normalize(" invoices:read  invoices:read ").as_deref(),
            Some("invoices:read")
        );
        assert_eq!(
            normalize("invoices:read invoices:write").as_deref(),
            Some("invoices:read invoices:write")
        );
        assert_eq!(normalize("invoices:read invoices:delete"), None);
        assert_eq!(normalize(" "), None);
        assert_eq!(
            narrow("invoices:read", "invoices:read").as_deref(),
            Some("invoices:read")
        );
        assert_eq!(narrow("invoices:read", ""), None);
    }
}
