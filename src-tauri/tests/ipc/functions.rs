//! Every keiri-api function is a desktop command, and every streaming function streams: a
//! function added to `keiri_api::FUNCTIONS` without its command fails here.

use serde_json::{Value, json};

use crate::commands::{invoke, studio};

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
fn every_api_function_is_a_command_of_the_same_name() {
    let studio = studio();
    // No `request` key: the command is refused before it runs, so nothing is read or written.
    for name in keiri_api::FUNCTIONS {
        let err = invoke(&studio, name, json!({})).unwrap_err();
        assert_registered(name, &err);
    }
}

#[test]
fn an_unknown_command_is_refused_differently() {
    // Guards the check above: a name without a handler must not look registered.
    let studio = studio();
    let err = invoke(&studio, "no_such_function", json!({})).unwrap_err();
    let message = err.as_str().unwrap_or_default();
    assert!(message.contains("not found"), "{err}");
}

#[test]
fn every_streaming_function_is_reachable_through_call_stream() {
    for name in keiri_api::STREAMING_FUNCTIONS {
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
    let err = invoke(&studio, "pick_files", json!({"request": {"title": 42}})).unwrap_err();
    assert_registered("pick_files", &err);
}
