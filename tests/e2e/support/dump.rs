//! Everything a test's store holds, as text: every row of every table (SQLite, PostgreSQL),
//! or every key under the test's prefix with its value (Redis, each node of a Cluster). For
//! checks that something is gone without trusting grantry's own reads.

use sqlx::Connection;

use super::Server;

/// The whole store of `server`, as text.
pub async fn store_text(server: &Server) -> String {
    let args = server.args();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .map(|at| args[at + 1].clone())
    };
    match flag("--store") {
        None => sqlite(&server.data_dir.path().join("grantry.db")).await,
        Some(url) if url.starts_with("postgres") => postgres(&url).await,
        Some(url) => redis(&url, &flag("--store-prefix").unwrap_or_default()).await,
    }
}

async fn sqlite(path: &std::path::Path) -> String {
    let url = format!("sqlite://{}", path.display());
    let mut conn = sqlx::SqliteConnection::connect(&url).await.unwrap();
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
            .fetch_all(&mut conn)
            .await
            .unwrap();
    let mut text = String::new();
    for table in tables {
        let columns: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT name FROM pragma_table_info('{table}')"
        )))
        .fetch_all(&mut conn)
        .await
        .unwrap();
        let row = columns
            .iter()
            .map(|c| format!("quote(\"{c}\")"))
            .collect::<Vec<_>>()
            .join(" || '|' || ");
        let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT {row} FROM \"{table}\""
        )))
        .fetch_all(&mut conn)
        .await
        .unwrap();
        text.push_str(&format!("{table}:\n{}\n", rows.join("\n")));
    }
    text
}

async fn postgres(url: &str) -> String {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let mut text = String::new();
    for table in tables {
        let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT t::text FROM \"{table}\" t"
        )))
        .fetch_all(&mut conn)
        .await
        .unwrap();
        text.push_str(&format!("{table}:\n{}\n", rows.join("\n")));
    }
    text
}

/// Every key under `prefix` with its value, from the one server of `url`, or from each node
/// a `redis+cluster://` URL names.
async fn redis(url: &str, prefix: &str) -> String {
    let nodes: Vec<String> = match url.strip_prefix("redis+cluster://") {
        Some(list) => list.split(',').map(|n| format!("redis://{n}")).collect(),
        None => vec![url.to_owned()],
    };
    let mut text = String::new();
    for node in nodes {
        text.push_str(&redis_node(&node, prefix).await);
    }
    text
}

async fn redis_node(url: &str, prefix: &str) -> String {
    let client = redis::Client::open(url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    // A Cluster's replica answers reads of its own keys only after READONLY.
    let _ = redis::cmd("READONLY").query_async::<()>(&mut conn).await;
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut conn)
        .await
        .unwrap();
    let mut text = String::new();
    for key in keys {
        let kind: String = redis::cmd("TYPE")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        let read = match kind.as_str() {
            "string" => redis::cmd("GET").arg(&key).clone(),
            "hash" => redis::cmd("HGETALL").arg(&key).clone(),
            "list" => redis::cmd("LRANGE").arg(&key).arg(0).arg(-1).clone(),
            "set" => redis::cmd("SMEMBERS").arg(&key).clone(),
            "zset" => redis::cmd("ZRANGE").arg(&key).arg(0).arg(-1).clone(),
            _ => continue,
        };
        let value: redis::Value = read
            .query_async(&mut conn)
            .await
            .unwrap_or(redis::Value::Nil);
        text.push_str(&format!("{key} = {}\n", value_text(&value)));
    }
    text
}

/// A reply's strings as text (bulk strings are bytes in `redis::Value`).
fn value_text(value: &redis::Value) -> String {
    match value {
        redis::Value::BulkString(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        redis::Value::SimpleString(text) => text.clone(),
        redis::Value::Int(n) => n.to_string(),
        redis::Value::Array(items) | redis::Value::Set(items) => {
            items.iter().map(value_text).collect::<Vec<_>>().join(" ")
        }
        redis::Value::Map(pairs) => pairs
            .iter()
            .map(|(k, v)| format!("{}={}", value_text(k), value_text(v)))
            .collect::<Vec<_>>()
            .join(" "),
        other => format!("{other:?}"),
    }
}
