//! Secret redaction and safe URLs.

use keiri_llm::redact::{REDACTED, redact_url};
use keiri_llm::{Env, Redactor};

#[track_caller]
fn check(redactor: &Redactor, text: &str, expect: &str) {
    assert_eq!(redactor.redact(text), expect, "text {text:?}");
}

#[test]
fn known_secrets_and_token_shapes() {
    let r = Redactor::new(["my-secret-1", "abc", "pa\"ss\\word"]);
    check(&r, "key=my-secret-1;", &format!("key={REDACTED};"));
    // Too short to be a secret: left alone.
    check(&r, "abc", "abc");
    // JSON-escaped form inside a log line.
    check(
        &r,
        r#"{"k":"pa\"ss\\word"}"#,
        &format!(r#"{{"k":"{REDACTED}"}}"#),
    );
    check(
        &r,
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload",
        &format!("Authorization: Bearer {REDACTED}"),
    );
    check(&r, "Bearer short", "Bearer short");
    check(
        &r,
        "got sk-proj-AbCdEf0123456789xyz, expected sk-xxxx",
        &format!("got {REDACTED}, expected sk-xxxx"),
    );
    // Not a key: part of a longer word.
    check(
        &r,
        "task-sk-00000000000000000000",
        "task-sk-00000000000000000000",
    );
    check(
        &r,
        "日本語のメッセージ sk-aaaaaaaaaaaaaaaaaaaa。",
        &format!("日本語のメッセージ {REDACTED}。"),
    );
}

#[test]
fn secret_variables_of_the_environment() {
    let env = Env::from_pairs([
        ("OPENAI_API_KEY", "value-one-111"),
        ("GITHUB_TOKEN", "value-two-222"),
        ("DB_PASSWORD", "value-three-333"),
        ("KEIRI_LLM_MODEL", "gpt-4.1-mini"),
    ]);
    let r = Redactor::from_env(&env);
    check(
        &r,
        "value-one-111 value-two-222 value-three-333 gpt-4.1-mini",
        &format!("{REDACTED} {REDACTED} {REDACTED} gpt-4.1-mini"),
    );
    assert!(!format!("{r:?}").contains("value"));
}

#[track_caller]
fn check_url(raw: &str, expect: &str) {
    assert_eq!(redact_url(raw), expect);
}

#[test]
fn urls_lose_credentials_and_queries() {
    check_url("https://api.openai.com/v1", "https://api.openai.com/v1");
    check_url(
        "http://user:pw@127.0.0.1:8080/v1?key=abc#x",
        "http://127.0.0.1:8080/v1",
    );
    check_url(
        "https://res.openai.azure.com/",
        "https://res.openai.azure.com/",
    );
    check_url("not a url", "<invalid url>");
}
