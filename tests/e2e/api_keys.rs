//! Providers connected with an API key, end to end, on every store: the connect link of a
//! `list_invoices` at Paddle opens a key form on grantry's own page; a malformed key is refused
//! without asking the provider, a wrong one after the provider refused it, a forged POST
//! before anything, each storing nothing; the right key is stored sealed (no store holds it in
//! plaintext, nor does the log), serves the held retry and later calls, shows on
//! `/connections`, and is forgotten on disconnect. Paddle is the fake of
//! support::key_providers (it checks the key as Paddle does).

use std::sync::atomic::Ordering;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::connections::link_to;
use crate::support::key_providers::{CHARGEBEE_SITES, KeyFake, PADDLE_KEY};
use crate::support::leaks;
use crate::support::mcp::url_and_form;
use crate::support::servers::as_strs;
use crate::support::{Browser, Mcp, Server};

fn at_paddle() -> Value {
    json!({"provider": "paddle", "status": "all"})
}

async fn grantry_with_paddle(fake: &KeyFake, dir: &tempfile::TempDir, store: &[String]) -> Server {
    let catalog = dir.path().join("providers.toml");
    std::fs::write(&catalog, fake.catalog()).unwrap();
    let mut args = vec![
        "--providers".to_owned(),
        catalog.to_str().unwrap().to_owned(),
    ];
    args.extend_from_slice(store);
    Server::start(&as_strs(&args)).await
}

/// Types `key` into the key form a connect `link` opens; the answer to its POST.
async fn type_key(browser: &Browser, link: &str, key: &str) -> crate::support::browser::Page {
    let form = browser.get(link).await.form().with("api_key", key);
    browser.submit(&form).await
}

async fn connections(mcp: &Mcp) -> usize {
    mcp.connections().await["connections"]
        .as_array()
        .map_or(0, Vec::len)
}

async fn a_key_is_checked_then_stored_sealed_and_forgotten_on_disconnect(store: &[String]) {
    let (fake, dir) = (KeyFake::start().await, tempfile::tempdir().unwrap());
    let server = grantry_with_paddle(&fake, &dir, store).await;
    let mcp = Mcp::new(server.mcp_url());
    let first = mcp
        .call_tool("list_invoices", at_paddle(), url_and_form())
        .await;
    let (link, state, answer_key) = first.sign_in_round();

    // The form: on grantry's origin, the key in a password field nothing autocompletes.
    let browser = Browser::new();
    let page = browser.get(&link).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.body);
    assert!(
        page.body.contains(r#"name="api_key" type="password""#),
        "{}",
        page.body
    );
    assert!(page.body.contains(r#"autocomplete="off""#));
    assert!(
        page.body.contains("forget the key"),
        "revoking means forgetting"
    );
    let form = page.form();
    assert!(
        form.action
            .starts_with(&format!("{}/connect/", server.base))
    );

    // Refused, each storing nothing: forged, malformed (the provider is not asked), wrong.
    let forged = browser
        .submit(
            &form
                .clone()
                .with("csrf", "v1.forged")
                .with("api_key", PADDLE_KEY),
        )
        .await;
    assert_eq!(forged.status, StatusCode::FORBIDDEN, "{}", forged.body);
    let malformed = browser.submit(&form.clone().with("api_key", "a key")).await;
    assert_eq!(malformed.status, StatusCode::BAD_REQUEST);
    assert!(
        malformed.body.contains("does not look like an API key"),
        "{}",
        malformed.body
    );
    assert_eq!(
        fake.served.load(Ordering::SeqCst) + fake.refused.load(Ordering::SeqCst),
        0
    );
    let wrong = "pdl_sdbx_apikey_01jwrongkey_notTheOneTheFakeKnows";
    // Both keys are searched for in every trace-level log at the end (the leaks stage).
    leaks::record("api key", [PADDLE_KEY, wrong]);
    let refused = browser.submit(&form.clone().with("api_key", wrong)).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(
        refused.body.contains("Paddle refused this key"),
        "{}",
        refused.body
    );
    assert!(!refused.body.contains(wrong), "the key is never shown back");
    assert_eq!(fake.refused.load(Ordering::SeqCst), 1);
    assert_eq!(connections(&mcp).await, 0);

    // The right key: checked once, stored, and the held retry completes with it.
    let stored = browser
        .submit(&refused.form().with("api_key", PADDLE_KEY))
        .await;
    assert_eq!(stored.status, StatusCode::SEE_OTHER, "{}", stored.body);
    let landed = stored.location().unwrap();
    assert!(
        landed.starts_with("/connected?provider=paddle&receipt="),
        "{landed}"
    );
    let retry = mcp
        .retry(
            "list_invoices",
            at_paddle(),
            json!({ answer_key: {"action": "accept"} }),
            &state,
        )
        .await;
    let invoices = &retry.result()["structuredContent"]["invoices"];
    assert_eq!(invoices.as_array().map(Vec::len), Some(7), "{}", retry.raw);
    let open = mcp
        .call_tool(
            "list_invoices",
            json!({"provider": "paddle", "status": "open"}),
            url_and_form(),
        )
        .await;
    let open = &open.result()["structuredContent"]["invoices"];
    assert_eq!(
        open.as_array().map(Vec::len),
        Some(2),
        "billed and past_due: {open}"
    );

    let connection = only_connection_id(&mcp).await;
    assert!(
        store_holds(&server, store, &connection).await,
        "the search finds what the key's row holds in the clear (its connection id)"
    );
    assert!(
        !store_holds(&server, store, PADDLE_KEY).await,
        "the key is sealed at rest"
    );
    assert!(
        !server.settled_log().await.contains(PADDLE_KEY),
        "no log line holds the key"
    );
    assert!(!server.settled_log().await.contains(wrong));

    // Seen on /connections, and forgotten on disconnect: the next call asks for a key again.
    let listed = browser.get(&format!("{}/connections", server.base)).await;
    assert!(listed.body.contains("Paddle"), "{}", listed.body);
    let ask = browser
        .get(&format!(
            "{}{}",
            server.base,
            link_to(&listed.body, "Disconnect Paddle")
        ))
        .await;
    assert!(
        ask.body
            .contains("The key stays valid at Paddle until you delete it there"),
        "{}",
        ask.body
    );
    let gone = browser.submit(&ask.form()).await;
    assert_eq!(gone.status, StatusCode::OK, "{}", gone.body);
    assert!(
        gone.body.contains("has forgotten the API key"),
        "{}",
        gone.body
    );
    assert_eq!(connections(&mcp).await, 0);
    let again = mcp
        .call_tool("list_invoices", at_paddle(), url_and_form())
        .await;
    again.sign_in_round();
}

#[tokio::test]
async fn each_chargebee_site_is_its_own_connection_named_by_the_site_typed() {
    let (fake, dir) = (KeyFake::start().await, tempfile::tempdir().unwrap());
    let server = grantry_with_paddle(&fake, &dir, &[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let args = json!({"provider": "chargebee", "status": "all"});
    let first = mcp
        .call_tool("list_invoices", args.clone(), url_and_form())
        .await;
    let (link, state, answer_key) = first.sign_in_round();
    let [(acme, acme_key), (globex, globex_key)] = CHARGEBEE_SITES;
    leaks::record("api key", [acme_key, globex_key]);

    let browser = Browser::new();
    let page = browser.get(&link).await;
    assert!(page.body.contains(r#"name="site""#), "{}", page.body);
    let form = page.form().with("api_key", acme_key);
    // A name that cannot be a site is refused here; an unknown site and a wrong key by
    // Chargebee: nothing is stored, and the site typed is kept in the form.
    let bad = browser.submit(&form.clone().with("site", "Acme!")).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(
        bad.body.contains("A site name is lowercase letters"),
        "{}",
        bad.body
    );
    assert_eq!(
        fake.served.load(Ordering::SeqCst) + fake.refused.load(Ordering::SeqCst),
        0
    );
    let unknown = browser
        .submit(&form.clone().with("site", "no-such-site"))
        .await;
    assert!(
        unknown.body.contains("Chargebee refused this key"),
        "{}",
        unknown.body
    );
    let wrong = browser
        .submit(&form.clone().with("site", acme).with("api_key", globex_key))
        .await;
    assert!(
        wrong.body.contains("Chargebee refused this key"),
        "{}",
        wrong.body
    );
    assert!(
        wrong.body.contains(&format!(r#"value="{acme}""#)),
        "the site is kept"
    );
    assert_eq!(fake.refused.load(Ordering::SeqCst), 1);
    assert_eq!(connections(&mcp).await, 0);

    let stored = browser.submit(&form.clone().with("site", acme)).await;
    assert_eq!(stored.status, StatusCode::SEE_OTHER, "{}", stored.body);
    let retry = mcp
        .retry(
            "list_invoices",
            args.clone(),
            json!({ answer_key: {"action": "accept"} }),
            &state,
        )
        .await;
    let invoices = retry.result()["structuredContent"]["invoices"].clone();
    assert_eq!(invoices.as_array().map(Vec::len), Some(5), "{}", retry.raw);
    assert_eq!(invoices[0]["customer"], format!("Customer of {acme}"));
    let open = mcp
        .call_tool(
            "list_invoices",
            json!({"provider": "chargebee", "status": "open"}),
            url_and_form(),
        )
        .await;
    let open = &open.result()["structuredContent"]["invoices"];
    assert_eq!(
        open.as_array().map(Vec::len),
        Some(3),
        "posted, payment_due, not_paid: {open}"
    );

    // A second site, from the connections page: a second connection, named by its site.
    let listed = browser.get(&format!("{}/connections", server.base)).await;
    let another = link_to(&listed.body, "Connect another Chargebee account");
    let page = browser.get(&another).await;
    let added = browser
        .submit(&page.form().with("site", globex).with("api_key", globex_key))
        .await;
    assert_eq!(added.status, StatusCode::SEE_OTHER, "{}", added.body);
    let listed = mcp.connections().await;
    let mut accounts: Vec<String> = listed["connections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["account"].as_str().unwrap_or_default().to_owned())
        .collect();
    accounts.sort();
    assert_eq!(accounts, [acme, globex], "{listed}");
    for connection in listed["connections"].as_array().unwrap() {
        let id = connection["connection_id"].as_str().unwrap();
        assert!(
            store_holds(&server, &[], id).await,
            "the search finds the rows' connection ids, stored in the clear: {id}"
        );
    }
    assert!(!store_holds(&server, &[], acme_key).await);
    assert!(!store_holds(&server, &[], globex_key).await);
}

#[tokio::test]
async fn a_key_deleted_at_the_provider_needs_a_new_one_on_the_next_call() {
    let (fake, dir) = (KeyFake::start().await, tempfile::tempdir().unwrap());
    let server = grantry_with_paddle(&fake, &dir, &[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let first = mcp
        .call_tool("list_invoices", at_paddle(), url_and_form())
        .await;
    let (link, _, _) = first.sign_in_round();
    let browser = Browser::new();
    let typed = type_key(&browser, &link, PADDLE_KEY).await;
    assert_eq!(typed.status, StatusCode::SEE_OTHER);
    let id = mcp.connections().await["connections"][0]["connection_id"].clone();

    fake.keys_deleted.store(true, Ordering::SeqCst);
    let after = mcp
        .call_tool("list_invoices", at_paddle(), url_and_form())
        .await;
    let (again, _, _) = after.sign_in_round();
    let listed = mcp.connections().await;
    assert_eq!(
        listed["connections"][0]["state"], "needs_reauth",
        "{listed}"
    );

    // A new key on the same connection: its id stays.
    fake.keys_deleted.store(false, Ordering::SeqCst);
    let typed = type_key(&browser, &again, PADDLE_KEY).await;
    assert_eq!(typed.status, StatusCode::SEE_OTHER);
    let listed = mcp.connections().await;
    assert_eq!(listed["connections"][0]["connection_id"], id, "{listed}");
    assert_eq!(listed["connections"][0]["state"], "active", "{listed}");
}

#[tokio::test]
async fn a_key_form_body_past_16_kib_is_refused_unread() {
    let (fake, dir) = (KeyFake::start().await, tempfile::tempdir().unwrap());
    let server = grantry_with_paddle(&fake, &dir, &[]).await;
    let mcp = Mcp::new(server.mcp_url());
    let first = mcp
        .call_tool("list_invoices", at_paddle(), url_and_form())
        .await;
    let (link, _, _) = first.sign_in_round();
    let browser = Browser::new();
    let huge = type_key(&browser, &link, &"k".repeat(20 * 1024)).await;
    assert_eq!(huge.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", huge.body);
    assert_eq!(
        fake.served.load(Ordering::SeqCst) + fake.refused.load(Ordering::SeqCst),
        0
    );
    assert_eq!(connections(&mcp).await, 0);
}

/// The id of the MCP client's user's one connection.
async fn only_connection_id(mcp: &Mcp) -> String {
    let listed = mcp.connections().await;
    assert_eq!(
        listed["connections"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    listed["connections"][0]["connection_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Whether any store row or value holds `needle` as it is (a test that it holds none must
/// first show that it finds one: see the positive controls beside each use): the SQLite files of the data
/// directory, every PostgreSQL row of the database, every Redis value under the prefix.
async fn store_holds(server: &Server, store: &[String], needle: &str) -> bool {
    match store.get(1).map(String::as_str) {
        None => sqlite_holds(server, needle),
        Some(url) if url.starts_with("postgres") => postgres_holds(url, needle).await,
        Some(url) => redis_holds(url, &store[3], needle).await,
    }
}

fn sqlite_holds(server: &Server, needle: &str) -> bool {
    let files = std::fs::read_dir(server.data_dir.path()).unwrap();
    files.flatten().any(|file| {
        let bytes = std::fs::read(file.path()).unwrap_or_default();
        bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
    })
}

async fn postgres_holds(url: &str, needle: &str) -> bool {
    use sqlx::{Connection, Row};
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert!(!tables.is_empty(), "the store's tables are there");
    for table in tables {
        let sql = format!("SELECT t::text AS row FROM \"{table}\" t");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_all(&mut conn)
            .await
            .unwrap();
        if rows
            .iter()
            .any(|row| row.get::<String, _>("row").contains(needle))
        {
            return true;
        }
    }
    false
}

async fn redis_holds(url: &str, prefix: &str, needle: &str) -> bool {
    let client = redis::Client::open(url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(!keys.is_empty(), "the store's keys are there");
    for key in keys {
        let kind: String = redis::cmd("TYPE")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        let (command, rest): (&str, &[&str]) = match kind.as_str() {
            "string" => ("GET", &[]),
            "hash" => ("HGETALL", &[]),
            "list" => ("LRANGE", &["0", "-1"]),
            "set" => ("SMEMBERS", &[]),
            "zset" => ("ZRANGE", &["0", "-1"]),
            "stream" => ("XRANGE", &["-", "+"]),
            _ => continue,
        };
        let mut read = redis::cmd(command);
        read.arg(&key).arg(rest);
        let value: redis::Value = read.query_async(&mut conn).await.unwrap();
        if holds(&value, needle.as_bytes()) {
            return true;
        }
    }
    false
}

/// Whether a Redis reply holds `needle` in one of its strings.
fn holds(value: &redis::Value, needle: &[u8]) -> bool {
    use redis::Value;
    let has = |bytes: &[u8]| bytes.windows(needle.len()).any(|w| w == needle);
    match value {
        Value::BulkString(bytes) => has(bytes),
        Value::SimpleString(text) => has(text.as_bytes()),
        Value::Array(items) | Value::Set(items) => items.iter().any(|item| holds(item, needle)),
        Value::Map(pairs) => pairs
            .iter()
            .any(|(name, item)| holds(name, needle) || holds(item, needle)),
        _ => false,
    }
}

/// SQLite, PostgreSQL and one Redis: the stores whose every byte this test can read back.
mod a_key_is_checked_then_stored_sealed_and_forgotten_on_disconnect {
    use crate::support::servers;

    #[tokio::test]
    async fn sqlite() {
        super::a_key_is_checked_then_stored_sealed_and_forgotten_on_disconnect(&[]).await;
    }

    #[tokio::test]
    async fn postgres() {
        let Some((args, _guard)) = servers::postgres_store().await else {
            return;
        };
        super::a_key_is_checked_then_stored_sealed_and_forgotten_on_disconnect(&args).await;
    }

    #[tokio::test]
    async fn redis() {
        let Some((args, _guard)) = servers::redis_store().await else {
            return;
        };
        super::a_key_is_checked_then_stored_sealed_and_forgotten_on_disconnect(&args).await;
    }
}
