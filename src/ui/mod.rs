//! What a person reads: grantry's words in their language ([`lang`]: Fluent catalogs, English,
//! German and French), dates and times as their language writes them ([`when`]), under the
//! deployment's brand ([`mod@brand`]).
//!
//! A page is rendered for one reader: the browser routes run each request inside
//! [`for_reader`], and the templates read the reader's language and brand with [`t`],
//! [`t_with`] and [`brand()`], so no page (nor any error page) can forget them. Outside a
//! request, the reader is English under the default brand.

pub(crate) mod brand;
pub(crate) mod lang;
pub(crate) mod when;

use std::future::Future;
use std::sync::Arc;

pub(crate) use brand::Brand;
pub(crate) use lang::Lang;
pub(crate) use when::Moment;

/// Who a page is rendered for: their language, and the brand they see.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reader {
    pub(crate) lang: Lang,
    pub(crate) brand: Arc<Brand>,
}

tokio::task_local! {
    static READER: Reader;
}

/// Runs `work` (a request's handling) for `reader`.
pub(crate) async fn for_reader<F: Future>(reader: Reader, work: F) -> F::Output {
    READER.scope(reader, work).await
}

/// The reader of the request being handled.
pub(crate) fn reader() -> Reader {
    READER.try_with(Reader::clone).unwrap_or_default()
}

/// The message `key` in the reader's language.
pub(crate) fn t(key: &str) -> String {
    reader().lang.t(key)
}

/// The message `key` with arguments, in the reader's language.
pub(crate) fn t_with(key: &str, args: &[(&'static str, &str)]) -> String {
    reader().lang.t_with(key, args)
}

/// The moment `unix` (seconds) as the reader reads it.
pub(crate) fn moment(unix: i64) -> Moment {
    when::moment(reader().lang, unix)
}

/// The brand the reader sees.
pub(crate) fn brand() -> Arc<Brand> {
    reader().brand
}
