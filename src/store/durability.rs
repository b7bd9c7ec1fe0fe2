//! A grant is shown as connected only once the store has it durably, so grantry checks at
//! start that the store is configured to keep acknowledged writes through a crash:
//! PostgreSQL with `synchronous_commit` on; Redis with AOF, an fsync on every write, and no
//! eviction under memory pressure, on every node (each of a cluster's, the primary and its
//! replicas behind Sentinel). Otherwise it refuses to start, unless told
//! `--allow-volatile-store`. SQLite is opened with `synchronous=FULL` by grantry itself.

use sqlx::Connection;

use super::{RedisConn, StoreError, StoreUrl, redis};

/// Checks the store at `url`; with `allow_volatile`, problems are logged instead of fatal.
pub(crate) async fn check(store: &StoreUrl, allow_volatile: bool) -> Result<(), StoreError> {
    let url = match store {
        StoreUrl::Postgres(url) => return check_postgres(url, allow_volatile).await,
        StoreUrl::Sqlite(_) => return Ok(()),
        StoreUrl::Redis(url) => url,
    };
    let problems = match problems(url).await {
        Ok(problems) => problems,
        // Not the Redis its URL says: that is the refusal, whatever its settings.
        Err(refused @ StoreError::Unavailable(_)) => return Err(refused),
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
    let standbys: String = sqlx::query_scalar("SHOW synchronous_standby_names")
        .fetch_one(&mut conn)
        .await?;
    let Some(problem) = postgres_problem(&setting, &standbys) else {
        return Ok(());
    };
    if allow_volatile {
        tracing::warn!(
            problem,
            "PostgreSQL can lose grants; started anyway (--allow-volatile-store)"
        );
        return Ok(());
    }
    Err(StoreError::Unavailable(format!(
        "{problem}, so grants users were told are connected could be lost. Set it for grantry's \
         database or role, or start with --allow-volatile-store to accept the risk"
    )))
}

/// What in PostgreSQL's settings would let a commit be lost: no flush at all, or, where
/// commits wait for synchronous standbys (`synchronous_standby_names`), not waiting for them.
fn postgres_problem(synchronous_commit: &str, standbys: &str) -> Option<String> {
    if synchronous_commit == "off" {
        return Some("PostgreSQL has synchronous_commit off: a crash can lose a commit".into());
    }
    if !standbys.trim().is_empty() && synchronous_commit == "local" {
        return Some(format!(
            "PostgreSQL waits for synchronous standbys ({standbys}) but synchronous_commit is \
             local, so a commit need not have reached one: set it to on, remote_write or \
             remote_apply"
        ));
    }
    None
}

async fn problems(url: &str) -> Result<Vec<String>, StoreError> {
    let conn = RedisConn::connect(url).await?;
    Ok(redis::checks::durability_problems(&conn).await?)
}

#[cfg(test)]
mod tests {
    use super::postgres_problem;

    #[test]
    fn commits_that_could_be_lost_are_named() {
        assert!(postgres_problem("off", "").is_some());
        assert!(
            postgres_problem("local", "").is_none(),
            "no standbys: local is on"
        );
        assert!(
            postgres_problem("local", "FIRST 1 (b)")
                .unwrap()
                .contains("remote_write")
        );
        assert!(postgres_problem("on", "FIRST 1 (b)").is_none());
        assert!(postgres_problem("remote_apply", "ANY 1 (b, c)").is_none());
    }
}
