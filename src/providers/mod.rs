//! Third-party providers: the catalog, the OAuth client that talks to them (revocation
//! included), and one invoice adapter per billing API.

pub(crate) mod adapters;
pub(crate) mod catalog;
pub mod http;
pub(crate) mod invoice;
pub mod oauth;
pub(crate) mod revocation;
pub(crate) mod upstream;

pub(crate) use crate::ids::{AccountId, ProviderId};
pub use catalog::sign_in::SignIn;
pub use catalog::{Catalog, Provider};
pub(crate) use catalog::{CatalogError, KeyForm, OAuthClient, SiteName};
pub(crate) use upstream::Upstream;

use serde::{Deserialize, Serialize};

/// The account at a provider a grant is used with (a Xero tenant, a QuickBooks company, a
/// FreshBooks business, a Zoho organization, a Sage business), picked right after connect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub id: AccountId,
    pub name: String,
}
pub(crate) use invoice::StatusFilter;
