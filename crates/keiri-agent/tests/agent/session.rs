use keiri_agent::{Session, SessionStore, check_session_id};

#[test]
fn session_ids_are_safe_file_names() {
    for ok in ["s1", "20250101T000000Z-abc123", "a_b-c", &"x".repeat(64)] {
        assert!(check_session_id(ok).is_ok(), "{ok}");
    }
    for bad in [
        "",
        "../x",
        "a/b",
        ".hidden",
        "-x",
        "a.json",
        "a b",
        "\u{3042}",
        &"x".repeat(65),
    ] {
        assert_eq!(
            check_session_id(bad).unwrap_err().code(),
            "INVALID_ARGUMENT",
            "{bad}"
        );
    }
}

#[test]
fn sessions_round_trip_and_missing_or_damaged_ones_are_reported() {
    let ws = tempfile::tempdir().unwrap();
    let store = SessionStore::new(ws.path());
    assert_eq!(store.load("s1").unwrap_err().code(), "SESSION_NOT_FOUND");
    assert_eq!(store.load_or_new("s1").unwrap(), Session::new("s1"));
    let mut session = Session::new("s1");
    session
        .messages
        .push(keiri_llm::Message::user("こんにちは"));
    store.save(&session).unwrap();
    assert_eq!(store.load("s1").unwrap(), session);
    assert!(ws.path().join(".keiri/chat/s1.json").is_file());
    super::put(ws.path().join(".keiri/chat/s2.json"), "{");
    assert_eq!(store.load("s2").unwrap_err().code(), "SESSION_DAMAGED");
    // A file renamed to another id is not accepted as that session.
    std::fs::copy(
        ws.path().join(".keiri/chat/s1.json"),
        ws.path().join(".keiri/chat/s3.json"),
    )
    .unwrap();
    assert_eq!(store.load("s3").unwrap_err().code(), "SESSION_DAMAGED");
    assert_eq!(store.load("../s1").unwrap_err().code(), "INVALID_ARGUMENT");
    let rel = store.write_plan("s1", "id: p\n").unwrap();
    assert_eq!(rel, ".keiri/chat/s1/plan.yaml");
    assert_eq!(
        std::fs::read_to_string(ws.path().join(&rel)).unwrap(),
        "id: p\n"
    );
}
