use super::keys::KeyError;
use super::*;
use proptest::prelude::*;

const NOW: i64 = 1_800_000_000;

fn sealer(keys: &[[u8; KEY_LEN]]) -> Sealer {
    Sealer::new(
        KeyRing::from_keys(keys).unwrap(),
        "http://127.0.0.1:8080/mcp",
    )
}

#[test]
fn round_trip_and_fresh_nonce_each_time() {
    let s = sealer(&[[1; KEY_LEN]]);
    let a = s.seal_bytes(Purpose::RequestState, b"", b"hello");
    let b = s.seal_bytes(Purpose::RequestState, b"", b"hello");
    assert_ne!(a, b, "two seals of the same payload must differ");
    assert!(a.starts_with("g1."));
    assert_eq!(
        s.open_bytes(Purpose::RequestState, b"", &a).unwrap(),
        b"hello"
    );
}

#[test]
fn wrong_purpose_binding_or_audience_does_not_open() {
    let s = sealer(&[[1; KEY_LEN]]);
    let token = s.seal_bytes(Purpose::SignInTicket, b"row-a", b"x");
    assert_eq!(
        s.open_bytes(Purpose::RequestState, b"row-a", &token),
        Err(OpenError::Forged)
    );
    assert_eq!(
        s.open_bytes(Purpose::SignInTicket, b"row-b", &token),
        Err(OpenError::Forged)
    );
    let other = Sealer::new(
        KeyRing::from_keys(&[[1; KEY_LEN]]).unwrap(),
        "https://other.example/mcp",
    );
    assert_eq!(
        other.open_bytes(Purpose::SignInTicket, b"row-a", &token),
        Err(OpenError::Forged)
    );
}

#[test]
fn cheap_checks_run_first() {
    let s = sealer(&[[1; KEY_LEN]]);
    let long = format!("g1.{}", "A".repeat(MAX_SEALED_LEN));
    assert_eq!(
        s.open_bytes(Purpose::RequestState, b"", &long),
        Err(OpenError::TooLong)
    );
    assert_eq!(
        s.open_bytes(Purpose::RequestState, b"", "v1.AAAA"),
        Err(OpenError::Malformed)
    );
    assert_eq!(
        s.open_bytes(Purpose::RequestState, b"", "g1.AA+A/AAA"),
        Err(OpenError::Malformed)
    );
    let foreign = sealer(&[[2; KEY_LEN]]).seal_bytes(Purpose::RequestState, b"", b"x");
    assert_eq!(
        s.open_bytes(Purpose::RequestState, b"", &foreign),
        Err(OpenError::UnknownKey)
    );
    let token = s.seal_bytes(Purpose::RequestState, b"", b"x");
    let tampered = format!("{token}-TAMPERED");
    assert!(s.open_bytes(Purpose::RequestState, b"", &tampered).is_err());
}

#[test]
fn rotation_old_keys_open_new_key_seals_retired_key_refused() {
    let (k1, k2) = ([1; KEY_LEN], [2; KEY_LEN]);
    let old = sealer(&[k1]).seal_bytes(Purpose::StoredGrant, b"g", b"secret");
    let rotated = sealer(&[k2, k1]);
    let (plain, is_old) = rotated
        .open_bytes_with_key_id(Purpose::StoredGrant, b"g", &old)
        .unwrap();
    assert_eq!(plain, b"secret");
    assert!(
        is_old,
        "a value under a retired-soon key is reported as old"
    );
    let fresh = rotated.seal_bytes(Purpose::StoredGrant, b"g", b"secret");
    assert!(
        !rotated
            .open_bytes_with_key_id(Purpose::StoredGrant, b"g", &fresh)
            .unwrap()
            .1
    );
    assert_eq!(
        sealer(&[k2]).open_bytes(Purpose::StoredGrant, b"g", &old),
        Err(OpenError::UnknownKey)
    );
}

#[test]
fn key_ring_configuration_errors() {
    assert!(matches!(KeyRing::from_keys(&[]), Err(KeyError::Empty)));
    assert!(matches!(
        KeyRing::from_keys(&[[3; KEY_LEN], [3; KEY_LEN]]),
        Err(KeyError::DuplicateId(_))
    ));
    assert!(matches!(
        decode_key("c2hvcnQ"),
        Err(KeyError::WrongLength(5))
    ));
    assert!(matches!(
        decode_key("not base64!"),
        Err(KeyError::NotBase64)
    ));
    let generated = generate_key();
    assert_eq!(generated.len(), 43);
    assert!(KeyRing::from_encoded(&[generated]).is_ok());
}

#[test]
fn expiry_and_issue_time_with_leeway() {
    let s = sealer(&[[1; KEY_LEN]]);
    let token = s.seal_timed(Purpose::RequestState, b"", &"claims", NOW, 600);
    let open = |now| s.open_timed::<String>(Purpose::RequestState, b"", &token, now);
    assert_eq!(open(NOW).unwrap(), "claims");
    assert!(open(NOW + 600 + CLOCK_LEEWAY_SECS).is_ok());
    assert_eq!(
        open(NOW + 600 + CLOCK_LEEWAY_SECS + 1),
        Err(OpenError::Expired)
    );
    assert!(open(NOW - CLOCK_LEEWAY_SECS).is_ok());
    assert_eq!(
        open(NOW - CLOCK_LEEWAY_SECS - 1),
        Err(OpenError::NotYetValid)
    );
}

#[test]
fn debug_output_shows_key_ids_only() {
    let s = sealer(&[[7; KEY_LEN]]);
    let printed = format!("{s:?}");
    assert!(printed.contains(&s.key_ring().current_key_id()));
    assert!(!printed.contains("7, 7"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn every_flipped_bit_is_rejected(plain in proptest::collection::vec(any::<u8>(), 0..64)) {
        let s = sealer(&[[9; KEY_LEN]]);
        let token = s.seal_bytes(Purpose::RequestState, b"b", &plain);
        let raw = URL_SAFE_NO_PAD.decode(&token[PREFIX.len()..]).unwrap();
        for i in 0..raw.len() {
            for bit in 0..8 {
                let mut bad = raw.clone();
                bad[i] ^= 1 << bit;
                let forged = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&bad));
                prop_assert!(s.open_bytes(Purpose::RequestState, b"b", &forged).is_err());
            }
        }
        for cut in 0..raw.len() {
            let short = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&raw[..cut]));
            prop_assert!(s.open_bytes(Purpose::RequestState, b"b", &short).is_err());
        }
        let mut longer = raw;
        longer.push(0);
        let extended = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(&longer));
        prop_assert!(s.open_bytes(Purpose::RequestState, b"b", &extended).is_err());
    }

    #[test]
    fn arbitrary_strings_never_panic(input in ".{0,200}") {
        let s = sealer(&[[9; KEY_LEN]]);
        let _ = s.open_bytes(Purpose::RequestState, b"", &input);
        let prefixed = format!("g1.{input}");
        let _ = s.open_bytes(Purpose::RequestState, b"", &prefixed);
    }
}

#[test]
fn values_at_rest_survive_a_new_public_url_and_others_do_not() {
    let before = sealer(&[[1; KEY_LEN]]);
    let after = Sealer::new(
        KeyRing::from_keys(&[[1; KEY_LEN]]).unwrap(),
        "https://new.example/mcp",
    );
    let grant = before.seal_bytes(Purpose::StoredGrant, b"row", b"tokens");
    assert_eq!(
        after
            .open_bytes(Purpose::StoredGrant, b"row", &grant)
            .unwrap(),
        b"tokens"
    );
    let task = before.seal_bytes(Purpose::StoredTask, b"row", b"work");
    assert_eq!(
        after
            .open_bytes(Purpose::StoredTask, b"row", &task)
            .unwrap(),
        b"work",
        "a task's work is kept at rest too"
    );
    let state = before.seal_bytes(Purpose::RequestState, b"", b"state");
    assert_eq!(
        after.open_bytes(Purpose::RequestState, b"", &state),
        Err(OpenError::Forged)
    );
}

#[test]
fn what_a_task_may_keep_opens_again_and_more_is_refused() {
    let s = sealer(&[[1; KEY_LEN]]);
    // A dozen invoices' answer is far past what a client may hand back.
    let answer = vec![b'x'; 64 * 1024];
    let kept = s.seal_bytes(Purpose::StoredTask, b"row", &answer);
    assert!(kept.len() > MAX_SEALED_LEN);
    assert_eq!(
        s.open_bytes(Purpose::StoredTask, b"row", &kept).unwrap(),
        answer
    );
    let too_long = format!("g1.{}", "A".repeat(Purpose::StoredTask.max_len()));
    assert_eq!(
        s.open_bytes(Purpose::StoredTask, b"row", &too_long),
        Err(OpenError::TooLong)
    );
    // What earlier builds sealed, bound to the URL, still opens as that purpose alone.
    let earlier = s.seal_bytes(Purpose::TaskWorkBoundToUrl, b"row", b"work");
    assert_eq!(
        s.open_bytes(Purpose::StoredTask, b"row", &earlier),
        Err(OpenError::Forged)
    );
    assert_eq!(
        s.open_bytes(Purpose::TaskWorkBoundToUrl, b"row", &earlier)
            .unwrap(),
        b"work"
    );
}
