//! Every keiri-api function is reachable through the desktop's one `call` command, and every
//! streaming function streams through `call_stream`.

use serde_json::{Value, json};

use crate::commands::{call, invoke_command, studio};

/// Tauri's answer when the arguments do not fit a registered command, as opposed to its
/// "command … not found" for a name no handler knows.
fn assert_registered(cmd: &str, err: &Value) {
    let message = err.as_str().unwrap_or_default();
    assert!(
        message.contains(cmd) && message.contains("request") && !message.contains("not found"),
        "{cmd} is not a registered command taking `request`: {err}"
    );
}

#[test]
fn every_api_function_is_reachable_through_call() {
    let studio = studio();
    // A body no request type accepts: the function is found, then refuses it before it runs,
    // so nothing is read or written.
    // The functions register themselves in keiri-api's modules: this binary must see them
    // all, not an empty list that would pass the loop below without calling anything.
    let listed = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/api/functions.ts"),
    )
    .unwrap();
    assert_eq!(
        keiri_api::FUNCTIONS.len(),
        listed.matches("\n  | '").count() - keiri_api::STREAMING_FUNCTIONS.len(),
        "{listed}"
    );
    for name in keiri_api::FUNCTIONS.iter() {
        let err = call(&studio, name, json!(42)).unwrap_err();
        assert_eq!(err["code"], json!("INVALID_REQUEST"), "{name}: {err}");
    }
}

#[test]
fn an_unknown_function_is_refused_differently() {
    // Guards the check above: a name the API does not have is NOT_FOUND, and the old
    // per-function commands are gone.
    let studio = studio();
    let err = call(&studio, "no_such_function", json!({})).unwrap_err();
    assert_eq!(err["code"], json!("NOT_FOUND"), "{err}");
    let err = call(&studio, "documents_import", json!({})).unwrap_err();
    assert_eq!(err["code"], json!("NOT_FOUND"), "{err}");
    let err = invoke_command(&studio, "catalog_list", json!({"request": {}})).unwrap_err();
    assert!(
        err.as_str().unwrap_or_default().contains("not found"),
        "{err}"
    );
}

#[test]
fn every_streaming_function_is_reachable_through_call_stream() {
    for name in keiri_api::STREAMING_FUNCTIONS.iter() {
        assert!(keiri_api::FUNCTIONS.contains(name), "{name}");
        // A body no request type accepts: the function is found, then refuses it.
        let frames = crate::stream::call(name, json!(42));
        let last = frames.last().unwrap();
        assert_eq!(
            last["error"]["code"],
            json!("INVALID_REQUEST"),
            "{name}: {frames:?}"
        );
    }
}

#[test]
fn pick_files_is_registered() {
    // Only its arguments are checked here: the dialog itself needs a display.
    let studio = studio();
    let err = invoke_command(&studio, "pick_files", json!({"request": {"title": 42}})).unwrap_err();
    assert_registered("pick_files", &err);
}
