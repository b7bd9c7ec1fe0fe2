//! Redis keeps grants only as durably as it is configured to. Before grantry stores grants
//! in a Redis, it checks that an acknowledged write survives a crash (AOF with an fsync on
//! every write) and that keys are never evicted under memory pressure (`noeviction`).
//! Otherwise it refuses to start, unless told `--allow-volatile-store`.

use super::StoreError;

/// Checks the Redis at `url`; with `allow_volatile`, problems are logged instead of fatal.
pub async fn check(url: &str, allow_volatile: bool) -> Result<(), StoreError> {
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
