//! Free-form JSON extraction.

use serde_json::{Value, json};

use keiri_llm::extract::{Found, MAX_EXTRACT_BYTES, extract_json};

#[track_caller]
fn check(text: &str, expect: Option<(Value, Found)>) {
    assert_eq!(extract_json(text), expect, "text {text:?}");
}

#[test]
fn where_json_is_found() {
    check(r#"{"a": 1}"#, Some((json!({"a": 1}), Found::Whole)));
    check("  [1, 2]\n", Some((json!([1, 2]), Found::Whole)));
    check(
        "\u{feff}{\"bom\": true}",
        Some((json!({"bom": true}), Found::Whole)),
    );
    check(
        "Here you go:\n```json\n{\"a\": \"x\"}\n```\nThanks",
        Some((json!({"a": "x"}), Found::Fenced)),
    );
    check(
        "```\n{\"plain\": 1}\n```",
        Some((json!({"plain": 1}), Found::Fenced)),
    );
    check(
        "```{\"inline\": 1}```",
        Some((json!({"inline": 1}), Found::Fenced)),
    );
    // The first fence that parses wins.
    check(
        "```text\nnot json\n```\n```json\n{\"second\": 2}\n```",
        Some((json!({"second": 2}), Found::Fenced)),
    );
    check(
        "```json\n{\"unclosed\": 1}\n",
        Some((json!({"unclosed": 1}), Found::Fenced)),
    );
    check(
        "The plan is {\"nodes\": [{\"id\": \"a}\"}]} as requested.",
        Some((json!({"nodes": [{"id": "a}"}]}), Found::Embedded)),
    );
    check(
        "計画：{\"説明\": \"読込→出力\", \"n\": [1]}です",
        Some((json!({"説明": "読込→出力", "n": [1]}), Found::Embedded)),
    );
    check(
        "bad {not json} then good {\"ok\": true}",
        Some((json!({"ok": true}), Found::Embedded)),
    );
    check(
        r#"escaped {"q": "a \" } b"} end"#,
        Some((json!({"q": "a \" } b"}), Found::Embedded)),
    );
}

#[test]
fn nothing_to_find() {
    check("", None);
    check("no json here", None);
    check("{ unbalanced", None);
    check("] } mismatched {", None);
    check("```json\n{broken\n```", None);
}

#[test]
fn hostile_input_is_bounded() {
    // Thousands of openers that never close: bounded tries, no hang.
    let text = "{[".repeat(50_000);
    check(&text, None);
    let huge = " ".repeat(MAX_EXTRACT_BYTES + 1) + "{}";
    check(&huge, None);
}
