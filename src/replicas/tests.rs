use super::*;

fn replica(id: &str, started_at_ms: i64, url: &str, keys: &[&str]) -> Replica {
    Replica {
        id: id.into(),
        host: format!("host-{id}"),
        listen: "0.0.0.0:8080".into(),
        public_url: url.into(),
        sealing_key: keys[0].into(),
        key_ids: keys.iter().map(|k| k.to_string()).collect(),
        started_at_ms,
        seen_at_ms: started_at_ms,
    }
}

const URL: &str = "https://grantry.example";

#[test]
fn a_replica_that_agrees_with_the_earlier_ones_starts() {
    let first = replica("a", 1, URL, &["k1"]);
    let me = replica("b", 2, URL, &["k1"]);
    assert_eq!(disagreement(&me, &[first, me.clone()]), None);
    assert_eq!(disagreement(&me, &[]), None, "the first replica");
}

#[test]
fn another_public_url_is_named_with_the_peer_that_serves_it() {
    let first = replica("a", 1, URL, &["k1"]);
    let me = replica("b", 2, "http://127.0.0.1:8081", &["k1"]);
    let found = disagreement(&me, &[first]).unwrap();
    let said = found.to_string();
    assert!(matches!(found, Disagreement::PublicUrl { .. }));
    assert!(
        said.starts_with("--public-url (GRANTRY_PUBLIC_URL)"),
        "{said}"
    );
    assert!(said.contains(URL) && said.contains("host-a"), "{said}");
}

#[test]
fn keys_must_open_each_others_values_and_a_rotation_in_steps_passes() {
    let first = replica("a", 1, URL, &["k1"]);
    let stranger = replica("b", 2, URL, &["k2"]);
    assert!(matches!(
        disagreement(&stranger, std::slice::from_ref(&first)),
        Some(Disagreement::CannotOpenTheirs { .. })
    ));
    // Step one: the new key second, everywhere. Then first, everywhere.
    let added = replica("b", 2, URL, &["k1", "k2"]);
    assert_eq!(disagreement(&added, std::slice::from_ref(&first)), None);
    let moved = replica("c", 3, URL, &["k2", "k1"]);
    let found = disagreement(&moved, std::slice::from_ref(&first)).unwrap();
    assert!(
        matches!(found, Disagreement::TheyCannotOpenMine { .. }),
        "{found}"
    );
    assert!(
        found
            .to_string()
            .contains("add the new key after the current one")
    );
    assert_eq!(
        disagreement(&moved, &[added]),
        None,
        "every ring holds both"
    );
}

#[test]
fn of_two_started_at_once_only_the_later_is_refused() {
    let a = replica("a", 5, URL, &["k1"]);
    let b = replica("b", 5, URL, &["k2"]);
    assert!(disagreement(&b, std::slice::from_ref(&a)).is_some());
    assert_eq!(disagreement(&a, &[b]), None, "a started first (by id)");
}

#[test]
fn a_replica_that_died_is_named_with_when_it_was_seen() {
    // Killed, not stopped, at the same address: it still counts until its record lapses,
    // and the refusal says when it was seen and for how long it counts.
    let dead = replica("a", 1, URL, &["k1"]);
    let restarted = Replica {
        host: dead.host.clone(),
        listen: dead.listen.clone(),
        ..replica("b", 2, URL, &["k2"])
    };
    let said = disagreement(&restarted, &[dead]).unwrap().to_string();
    assert!(
        said.contains("s ago") && said.contains("counts for 30 s"),
        "{said}"
    );
}

#[test]
fn records_read_back_as_written_and_a_damaged_one_is_passed_over() {
    let record = replica("a", 1, URL, &["k1", "k2"]);
    assert_eq!(decode(&encode(&record)).unwrap(), record);
    assert!(decode("{").is_err());
    let text = encode(&record);
    assert_eq!(decode_each(["{", text.as_str()]), [record]);
    // A later build's record, with a field this one does not know and one missing.
    let later = r#"{"id":"c","public_url":"u","key_ids":["k1"],"zone":"eu"}"#;
    assert_eq!(decode(later).unwrap().id, "c");
}
