//! Which provider scopes a connection needs for what a call does: incremental consent.
//!
//! An entry that names `write_scopes` asks only for what the calling tool needs (reading
//! first) and for write access when a tool first writes; one that does not asks for all of
//! its `scopes` at every sign-in, as before.

use super::Provider;
use crate::access::Access;

impl Provider {
    /// The scopes a sign-in asks for so the connection serves a call with `access`: the
    /// entry's `scopes` always, `read_scopes`, and `write_scopes` for a call that writes.
    pub(crate) fn scopes_for(&self, access: Access) -> Vec<String> {
        let mut scopes = self.scopes.clone();
        add_missing(&mut scopes, &self.read_scopes);
        if access.writes_at_provider() {
            add_missing(&mut scopes, &self.write_scopes);
        }
        scopes
    }

    /// Whether the entry asks per access level (and so a connection may lack write access).
    pub(crate) fn asks_per_access(&self) -> bool {
        !self.write_scopes.is_empty()
    }

    /// Whether `scope` is one the entry names, at any level.
    pub(crate) fn knows_scope(&self, scope: &str) -> bool {
        [&self.scopes, &self.read_scopes, &self.write_scopes]
            .iter()
            .any(|list| list.iter().any(|s| s == scope))
    }

    /// What of `needed` a connection granted `granted` lacks.
    pub(crate) fn lacking<'a>(&self, needed: &'a [String], granted: &[String]) -> Vec<&'a str> {
        needed
            .iter()
            .filter(|scope| !granted.contains(scope))
            .map(String::as_str)
            .collect()
    }

    /// What a connection granted `granted` lacks to serve a call with `access`; nothing for
    /// an entry that does not ask per access (its one sign-in asked for everything). Write
    /// access covers reading: a grant from before the entry asked per level, holding `scopes`
    /// and `write_scopes` only, still writes.
    pub(crate) fn lacking_for(&self, access: Access, granted: &[String]) -> Vec<String> {
        if !self.asks_per_access() {
            return Vec::new();
        }
        let mut needed = self.scopes.clone();
        let level = match access {
            Access::Write => &self.write_scopes,
            Access::Read | Access::Manage => &self.read_scopes,
        };
        add_missing(&mut needed, level);
        self.lacking(&needed, granted)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }
}

/// `more` added to `scopes`, each once, in order.
pub(crate) fn add_missing(scopes: &mut Vec<String>, more: &[String]) {
    for scope in more {
        if !scopes.contains(scope) {
            scopes.push(scope.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::Catalog;

    fn demo() -> Provider {
        Catalog::demo_entry("http://127.0.0.1:8080/demo").unwrap()
    }

    #[test]
    fn a_read_asks_for_read_and_a_write_for_both() {
        let demo = demo();
        assert_eq!(demo.scopes_for(Access::Read), ["invoices:read"]);
        assert_eq!(demo.scopes_for(Access::Manage), ["invoices:read"]);
        assert_eq!(
            demo.scopes_for(Access::Write),
            ["invoices:read", "invoices:write"]
        );
    }

    #[test]
    fn a_read_connection_lacks_write_only() {
        let demo = demo();
        let read = vec!["invoices:read".to_owned()];
        assert!(demo.lacking_for(Access::Read, &read).is_empty());
        assert_eq!(demo.lacking_for(Access::Write, &read), ["invoices:write"]);
    }

    #[test]
    fn write_scopes_alone_still_write() {
        let demo = demo();
        let write = vec!["invoices:write".to_owned()];
        assert!(demo.lacking_for(Access::Write, &write).is_empty());
    }

    #[test]
    fn an_entry_without_levels_never_lacks() {
        let mut demo = demo();
        demo.scopes = vec!["everything".into()];
        demo.read_scopes.clear();
        demo.write_scopes.clear();
        assert_eq!(demo.scopes_for(Access::Write), ["everything"]);
        assert!(demo.lacking_for(Access::Write, &[]).is_empty());
    }
}
