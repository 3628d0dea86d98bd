use keiri_api::Context;

fn check(name: &str, body: serde_json::Value, expect: Result<&str, &str>) {
    let ws = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(&ws.path().join("a.txt"), "一行目\n二行目\n".as_bytes()).unwrap();
    let ctx = Context::new(ws.path());
    match (crate::support::call(&ctx, name, body), expect) {
        (Ok(v), Ok(pointer_and_value)) => {
            let (pointer, value) = pointer_and_value.split_once('=').unwrap();
            assert_eq!(
                v.pointer(pointer).map(ToString::to_string).as_deref(),
                Some(value),
                "{v}"
            );
        }
        (Err(e), Err(code)) => assert_eq!(e.code.as_str(), code),
        (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
    }
}

#[test]
fn dispatch_documents() {
    use serde_json::json;
    check(
        "documents_extract",
        json!({"file_paths": ["a.txt"]}),
        Ok("/files/0/text=\"一行目\\n二行目\\n\""),
    );
    check(
        "documents_digest",
        json!({"file_paths": ["a.txt"]}),
        Ok("/digest=\"## a.txt\\n一行目\\n二行目\""),
    );
    check(
        "documents_extract_sections",
        json!({"file_path": "a.txt", "start_line": 2, "output_format": "json"}),
        Ok("/results/0/sections/0/content=\"二行目\""),
    );
    check(
        "documents_extract_sections",
        json!({"file_path": "a.txt", "start_line": 1}),
        Ok("/output_format=\"toon\""),
    );
    check(
        "documents_metrics",
        json!({"file_paths": ["a.txt"]}),
        Ok("/files/0/lines=2"),
    );
    check(
        "documents_metrics",
        json!({"file_paths": ["/etc/passwd"]}),
        Ok("/errors/0/code=\"PATH_DENIED\""),
    );
    check(
        "documents_extract_sections",
        json!({"file_path": "a.txt", "start_line": 1, "requests": []}),
        Err("INVALID_REQUEST"),
    );
    check(
        "documents_extract",
        json!({"file_paths": "a.txt"}),
        Err("INVALID_REQUEST"),
    );
}
