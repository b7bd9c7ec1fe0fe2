//! Third-party providers: the catalog, the OAuth client that talks to them, and one invoice
//! adapter per billing API.

pub mod catalog;
pub mod demo_adapter;
pub mod http;
pub mod invoice;
pub mod oauth;

pub use catalog::{Catalog, CatalogError, PkceMode, Provider, TokenAuth};
pub use invoice::{Invoice, InvoiceStatus, StatusFilter};
