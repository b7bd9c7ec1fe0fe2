use crate::mcp_calls::rounds::request_state::*;
use crate::seal::KeyRing;
use serde_json::json;

fn req<'a>(
    principal: &'a Principal,
    tool: &'a str,
    arguments: &'a Map<String, Value>,
) -> ToolRequest<'a> {
    ToolRequest {
        principal,
        tool,
        arguments: ArgumentsDigest::of_wire(arguments),
    }
}

const NOW: i64 = 1_800_000_000;

fn sealer() -> Sealer {
    Sealer::new(
        KeyRing::from_keys(&[[4; 32]]).unwrap(),
        "http://127.0.0.1:8080/mcp",
    )
}

fn principal(sub: &str) -> Principal {
    Principal {
        issuer: "urn:test".into(),
        subject: sub.into(),
    }
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

fn digest_of(arguments: &Map<String, Value>) -> ArgumentsDigest {
    ArgumentsDigest::of_wire(arguments)
}

#[test]
fn typed_arguments_digest_as_their_wire_form_does() {
    let wire = args(json!({"provider": "demo", "status": "paid"}));
    let typed = crate::tools::Arguments::read(crate::tools::Tool::ListInvoices, &wire).unwrap();
    assert_eq!(ArgumentsDigest::of(&typed), digest_of(&wire));
    let defaulted = crate::tools::Arguments::read(crate::tools::Tool::ListInvoices, &Map::new());
    assert_eq!(
        ArgumentsDigest::of(&defaulted.unwrap()),
        digest_of(&args(json!({"status": "open"}))),
        "a default the client left out is bound as the value it stands for"
    );
}

#[test]
fn key_order_does_not_change_the_digest_but_values_do() {
    let a = args(json!({"status": "open", "nested": {"b": 1, "a": [1, {"y": 2, "x": 1}]}}));
    let b = args(json!({"nested": {"a": [1, {"x": 1, "y": 2}], "b": 1}, "status": "open"}));
    assert_eq!(digest_of(&a), digest_of(&b));
    let c = args(json!({"status": "paid", "nested": {"b": 1, "a": [1, {"y": 2, "x": 1}]}}));
    assert_ne!(digest_of(&a), digest_of(&c));
    assert_ne!(
        digest_of(&args(json!({"a": [1, 2]}))),
        digest_of(&args(json!({"a": [2, 1]})))
    );
}

#[test]
fn state_binds_principal_tool_arguments_and_expiry() {
    let s = sealer();
    let alice = principal("alice");
    let a = args(json!({"status": "open"}));
    let claims = StateClaims::new(
        "tid",
        "g1.ticket",
        NOW + 600,
        &demo(),
        req(&alice, "list_invoices", &a),
    );
    let sealed = claims.seal(&s, NOW, 600);

    let opened = StateClaims::open(&s, &sealed, NOW, req(&alice, "list_invoices", &a)).unwrap();
    assert_eq!(opened, claims);
    assert_eq!(
        StateClaims::open(
            &s,
            &sealed,
            NOW,
            req(&principal("bob"), "list_invoices", &a)
        ),
        Err(StateRejection::OtherPrincipal)
    );
    assert_eq!(
        StateClaims::open(&s, &sealed, NOW, req(&alice, "other_tool", &a)),
        Err(StateRejection::OtherRequest)
    );
    assert_eq!(
        StateClaims::open(
            &s,
            &sealed,
            NOW,
            req(&alice, "list_invoices", &args(json!({"status": "all"})))
        ),
        Err(StateRejection::OtherRequest)
    );
    assert!(matches!(
        StateClaims::open(&s, &sealed, NOW + 3600, req(&alice, "list_invoices", &a)),
        Err(StateRejection::Seal(crate::seal::OpenError::Expired))
    ));
    let tampered = format!("{sealed}-TAMPERED");
    assert!(StateClaims::open(&s, &tampered, NOW, req(&alice, "list_invoices", &a)).is_err());
}

#[test]
fn a_ticket_does_not_open_as_a_request_state() {
    let s = sealer();
    let alice = principal("alice");
    let ticket =
        crate::connect::ticket::Ticket::new(&alice, &demo(), Default::default()).seal(&s, NOW, 600);
    assert!(
        StateClaims::open(&s, &ticket, NOW, req(&alice, "list_invoices", &Map::new())).is_err()
    );
}

#[test]
fn sealed_state_holds_nothing_readable() {
    let s = sealer();
    let alice = principal("alice@example.com");
    let claims = StateClaims::new(
        "tid",
        "g1.ticket",
        NOW + 600,
        &demo(),
        req(&alice, "list_invoices", &Map::new()),
    );
    let sealed = claims.seal(&s, NOW, 600);
    assert!(!sealed.contains("alice"));
    assert!(!sealed.contains("list_invoices"));
}

fn demo() -> crate::providers::ProviderId {
    "demo".parse().unwrap()
}
