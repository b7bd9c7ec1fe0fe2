//! A grant is shown as connected only once the store has it durably, so grantry checks at
//! start that the store is configured to keep acknowledged writes through a crash:
//! PostgreSQL with `synchronous_commit` on; Redis with AOF, an fsync on every write, and no
//! eviction under memory pressure. Otherwise it refuses to start, unless told
//! `--allow-volatile-store`. SQLite is opened with `synchronous=FULL` by grantry itself.

use sqlx::Connection;

use super::{StoreError, StoreUrl};

/// Checks the store at `url`; with `allow_volatile`, problems are logged instead of fatal.
pub(crate) async fn check(store: &StoreUrl, allow_volatile: bool) -> Result<(), StoreError> {
    let url = match store {
        StoreUrl::Postgres(url) => return check_postgres(url, allow_volatile).await,
        StoreUrl::Sqlite(_) => return Ok(()),
        StoreUrl::Redis(url) => url,
    };
    let problems = match problems(url).await {
        Ok(problems) => problems,
        Err(e) => vec![format!(
            "cannot read its configuration with CONFIG GET ({e}); grantry cannot tell whether \
             grants would survive a crash"
        )],
    };
    if problems.is_empty() {
        return Ok(());
    }
    let text = problems.join("; ");
    if allow_volatile {
        tracing::warn!(problems = %text, "Redis may lose grants; started anyway (--allow-volatile-store)");
        return Ok(());
    }
    Err(StoreError::Unavailable(format!(
        "this Redis could lose grants users were told are connected: {text}. Configure \
         `appendonly yes`, `appendfsync always` and `maxmemory-policy noeviction`, or start \
         with --allow-volatile-store (GRANTRY_ALLOW_VOLATILE_STORE=true) to accept the risk"
    )))
}

async fn check_postgres(url: &str, allow_volatile: bool) -> Result<(), StoreError> {
    let mut conn = sqlx::PgConnection::connect(url).await?;
    let setting: String = sqlx::query_scalar("SHOW synchronous_commit")
        .fetch_one(&mut conn)
        .await?;
    if setting != "off" {
        return Ok(());
    }
    if allow_volatile {
        tracing::warn!(
            "PostgreSQL has synchronous_commit off: a crash can lose grants; started anyway (--allow-volatile-store)"
        );
        return Ok(());
    }
    Err(StoreError::Unavailable(
        "PostgreSQL has synchronous_commit off, so a crash could lose grants users were told \
         are connected. Turn it on (the default) for grantry's database or role, or start with \
         --allow-volatile-store to accept the risk"
            .into(),
    ))
}

async fn problems(url: &str) -> Result<Vec<String>, redis::RedisError> {
    let client = redis::Client::open(url)?;
    let mut conn = client.get_multiplexed_async_connection().await?;
    let mut get = async |name: &str| -> Result<String, redis::RedisError> {
        let pair: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg(name)
            .query_async(&mut conn)
            .await?;
        Ok(pair.get(1).cloned().unwrap_or_default())
    };
    let mut problems = Vec::new();
    let appendonly = get("appendonly").await?;
    if appendonly != "yes" {
        problems.push(format!("appendonly is `{appendonly}`, not `yes`"));
    }
    let appendfsync = get("appendfsync").await?;
    if appendfsync != "always" {
        problems.push(format!(
            "appendfsync is `{appendfsync}`, not `always` (a crash loses up to a second of writes)"
        ));
    }
    let policy = get("maxmemory-policy").await?;
    if policy != "noeviction" {
        problems.push(format!("maxmemory-policy is `{policy}`, not `noeviction`"));
    }
    Ok(problems)
}
