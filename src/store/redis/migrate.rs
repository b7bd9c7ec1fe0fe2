//! A Redis store written before the buckets ([`super::layout`]) moved into them, once, at
//! start: each grant renamed into its owner's bucket and filed in the bucket's indexes (a
//! grant from before the keep-alive index is scheduled at once, as before), each outbox list
//! into its grant's bucket (or, its grant gone, the bucket of its connection) with its due
//! time kept, then the old indexes dropped and the store marked. One replica does it (under
//! a lease); the others wait for the mark. A cluster has only ever held this layout: it is
//! marked at once. Stop every replica of the version before when starting this one: one
//! still running would write what this one no longer reads.

use std::collections::HashMap;
use std::time::Duration;

use super::RedisConn;
use super::layout::{BUCKETS, Bucket, Keys};
use crate::store::StoreError;

/// How long the replica that migrates may take before another may.
const LEASE_MS: i64 = 10 * 60 * 1000;

/// Moves the store under `keys`' prefix into buckets, unless it is there already.
pub(crate) async fn to_buckets(conn: &RedisConn, keys: &Keys) -> Result<(), StoreError> {
    let mut c = conn.clone();
    if marked(&mut c, keys).await? {
        return Ok(());
    }
    if matches!(conn, RedisConn::Cluster { .. }) {
        return mark(&mut c, keys).await;
    }
    let lease = format!("{}lease:{{layout-migration}}", keys.prefix());
    let holder = crate::seal::random_id();
    let taken: Option<String> = redis::cmd("SET")
        .arg(&lease)
        .arg(&holder)
        .arg("NX")
        .arg("PX")
        .arg(LEASE_MS)
        .query_async(&mut c)
        .await?;
    if taken.is_none() {
        return wait_for_mark(&mut c, keys).await;
    }
    let tags = grants(&mut c, keys).await?;
    outbox(&mut c, keys, &tags).await?;
    mark(&mut c, keys).await?;
    let _: i64 = redis::cmd("DEL").arg(&lease).query_async(&mut c).await?;
    Ok(())
}

async fn marked(c: &mut RedisConn, keys: &Keys) -> Result<bool, StoreError> {
    Ok(redis::cmd("EXISTS")
        .arg(keys.marker())
        .query_async(c)
        .await?)
}

async fn mark(c: &mut RedisConn, keys: &Keys) -> Result<(), StoreError> {
    let _: () = redis::cmd("SET")
        .arg(keys.marker())
        .arg(format!("buckets:{BUCKETS}"))
        .query_async(c)
        .await?;
    Ok(())
}

async fn wait_for_mark(c: &mut RedisConn, keys: &Keys) -> Result<(), StoreError> {
    tracing::info!("another replica is moving the Redis store into buckets; waiting");
    for _ in 0..(LEASE_MS / 200) {
        if marked(c, keys).await? {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Err(StoreError::Unavailable(
        "the Redis store was not moved into buckets in time by another replica".into(),
    ))
}

/// Keys matching `pattern`, read with SCAN (one server: before buckets, there was no other).
async fn scan(c: &mut RedisConn, pattern: &str) -> Result<Vec<String>, StoreError> {
    let mut cursor: u64 = 0;
    let mut found = Vec::new();
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(1000)
            .query_async(c)
            .await?;
        found.extend(keys);
        if next == 0 {
            return Ok(found);
        }
        cursor = next;
    }
}

/// `(tag, rest)` of an old key `PREFIX{tag}rest`, unless it is in a bucket already.
fn old_parts<'k>(key: &'k str, kind: &str) -> Option<(&'k str, &'k str)> {
    if Bucket::in_key(key).is_some() {
        return None;
    }
    let rest = key.split_once(kind)?.1.strip_prefix('{')?;
    rest.split_once('}')
}

/// Renames `from` to `to`; gone since (deleted meanwhile) is fine.
async fn rename(c: &mut RedisConn, from: &str, to: &str) -> Result<bool, StoreError> {
    match redis::cmd("RENAME")
        .arg(from)
        .arg(to)
        .query_async::<()>(c)
        .await
    {
        Ok(()) => Ok(true),
        Err(e) if e.to_string().contains("no such key") => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Every grant into its bucket; returns each connection tag's bucket.
async fn grants(c: &mut RedisConn, keys: &Keys) -> Result<HashMap<String, Bucket>, StoreError> {
    let prefix = keys.prefix();
    let mut tags = HashMap::new();
    let old = scan(c, &format!("{prefix}grant:*")).await?;
    for name in &old {
        let Some((owner, rest)) = old_parts(name, "grant:") else {
            continue;
        };
        let tag = rest.strip_prefix(':');
        let bucket = Bucket::of(owner);
        tags.insert(tag.unwrap_or(owner).to_owned(), bucket);
        let new = keys.grant(owner, tag);
        if !rename(c, name, &new).await? {
            continue;
        }
        file_grant(c, keys, owner, &new, bucket).await?;
    }
    let mut gone: Vec<String> = scan(c, &format!("{prefix}grant-accounts:*"))
        .await?
        .into_iter()
        .filter(|key| Bucket::in_key(key).is_none())
        .collect();
    gone.extend([
        format!("{prefix}keepalive"),
        format!("{prefix}keepalive-indexed"),
    ]);
    let _: i64 = redis::cmd("DEL").arg(&gone).query_async(c).await?;
    if !old.is_empty() {
        tracing::info!(
            grants = tags.len(),
            "Redis store: grants moved into buckets"
        );
    }
    Ok(tags)
}

/// Files a grant moved to `new` in its bucket's indexes, as its own write would have.
async fn file_grant(
    c: &mut RedisConn,
    keys: &Keys,
    owner: &str,
    new: &str,
    bucket: Bucket,
) -> Result<(), StoreError> {
    let (keepalive_at, account): (Option<i64>, Option<String>) = redis::cmd("HMGET")
        .arg(new)
        .arg("keepalive_at")
        .arg("account")
        .query_async(c)
        .await?;
    let mut pipe = redis::pipe();
    pipe.cmd("SADD").arg(keys.grants(bucket)).arg(new).ignore();
    // No schedule yet (a grant from before the keep-alive): looked at soon.
    let at = keepalive_at.unwrap_or(1);
    if at > 0 {
        pipe.cmd("ZADD")
            .arg(keys.keepalive(bucket))
            .arg(at)
            .arg(new)
            .ignore();
    }
    if account.is_some_and(|a| !a.is_empty()) {
        pipe.cmd("SADD")
            .arg(keys.grant_accounts(owner))
            .arg(new)
            .ignore();
    }
    pipe.query_async::<()>(c).await?;
    Ok(())
}

/// Every outbox list into its grant's bucket, with the due sets rebuilt.
async fn outbox(
    c: &mut RedisConn,
    keys: &Keys,
    tags: &HashMap<String, Bucket>,
) -> Result<(), StoreError> {
    let prefix = keys.prefix();
    let mut moved = HashMap::new();
    for kind in ["outbox:", "outbox-log:", "outbox-parked:"] {
        for name in scan(c, &format!("{prefix}{kind}*")).await? {
            let Some((connection, rest)) = old_parts(&name, kind) else {
                continue;
            };
            let endpoint = rest.trim_start_matches(':').to_owned();
            let bucket = tags
                .get(connection)
                .copied()
                .unwrap_or_else(|| Bucket::of(connection));
            let pending = keys.outbox(bucket, connection, &endpoint);
            let new = match kind {
                "outbox:" => pending.clone(),
                "outbox-log:" => keys.beside(&pending, "log"),
                _ => keys.beside(&pending, "parked"),
            };
            rename(c, &name, &new).await?;
            let mut pipe = redis::pipe();
            pipe.cmd("SADD")
                .arg(keys.outbox_lists(bucket))
                .arg(&pending)
                .ignore();
            pipe.cmd("SADD")
                .arg(keys.outbox_endpoints(bucket))
                .arg(&endpoint)
                .ignore();
            pipe.query_async::<()>(c).await?;
            if kind == "outbox:" {
                moved.insert(name, (bucket, pending, endpoint));
            }
        }
    }
    due_sets(c, keys, &moved).await
}

/// The old due sets (one per endpoint, and before that one for all) into the buckets'.
async fn due_sets(
    c: &mut RedisConn,
    keys: &Keys,
    moved: &HashMap<String, (Bucket, String, String)>,
) -> Result<(), StoreError> {
    let prefix = keys.prefix();
    let mut old: Vec<String> = scan(c, &format!("{prefix}outbox-due:*"))
        .await?
        .into_iter()
        .filter(|key| Bucket::in_key(key).is_none())
        .collect();
    old.push(format!("{prefix}outbox-due"));
    for set in &old {
        let due: Vec<(String, f64)> = redis::cmd("ZRANGE")
            .arg(set)
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query_async(c)
            .await?;
        for (list, at) in due {
            if let Some((bucket, pending, endpoint)) = moved.get(&list) {
                let _: i64 = redis::cmd("ZADD")
                    .arg(keys.outbox_due(*bucket, endpoint))
                    .arg("NX")
                    .arg(at)
                    .arg(pending)
                    .query_async(c)
                    .await?;
            }
        }
    }
    let _: i64 = redis::cmd("DEL").arg(&old).query_async(c).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_keys_are_told_from_bucketed_ones() {
        assert_eq!(old_parts("p:grant:{own}", "grant:"), Some(("own", "")));
        assert_eq!(
            old_parts("p:grant:{own}:t1", "grant:"),
            Some(("own", ":t1"))
        );
        assert_eq!(
            old_parts("p:outbox:{conn}:ep", "outbox:"),
            Some(("conn", ":ep"))
        );
        let keys = Keys::new("p:");
        assert_eq!(old_parts(&keys.grant("own", None), "grant:"), None);
    }
}
