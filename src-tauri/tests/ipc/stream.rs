//! `call_stream` / `cancel_stream` through the IPC layer: frames arrive on the channel in the
//! order of the NDJSON stream, and end with exactly one result or error.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tauri::WebviewWindowBuilder;
use tauri::ipc::InvokeResponseBody;
use tauri::test::{mock_builder, mock_context, noop_assets};

/// The channel id the test's `onEvent` pretends the page created.
const CHANNEL: &str = "__CHANNEL__:7";

/// Calls `call_stream(function, request)` and returns the frames sent on its channel.
pub fn call(function: &str, request: Value) -> Vec<Value> {
    let frames: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = Arc::clone(&frames);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let workspace = tempfile::tempdir().unwrap();
    let mut ctx = keiri_api::Context::new(workspace.path())
        .with_catalog_dirs(vec![repo.join("block_specs")])
        .with_config_dir(workspace.path().join("config"))
        .with_secrets(crate::MemorySecrets::shared());
    ctx.template_dirs = vec![repo.join("templates")];
    let builder = mock_builder().channel_interceptor(move |_, _, _, body| {
        if let InvokeResponseBody::Json(text) = body {
            sink.lock()
                .unwrap()
                .push(serde_json::from_str(text).unwrap());
        }
        true
    });
    let app = keiri_studio::setup(builder, ctx)
        .build(mock_context(noop_assets()))
        .unwrap();
    let window = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    let studio = crate::commands::Studio {
        app,
        window,
        workspace,
    };
    let body = json!({
        "function": function,
        "request": request,
        "streamId": "s1",
        "onEvent": CHANNEL,
    });
    let response = crate::commands::invoke(&studio, "call_stream", body);
    assert_eq!(response, Ok(Value::Null), "{function}");
    // Every call is over once the command has answered.
    let streams = tauri::Manager::state::<keiri_studio::stream::Streams>(&studio.app);
    assert!(streams.is_empty());
    frames.lock().unwrap().clone()
}

#[test]
fn plan_generate_streams_its_stages_then_the_plan() {
    let frames = call(
        "plan_generate",
        json!({"instruction": "請求書の重複を検出してExcelに出力", "apply_mode": "compose"}),
    );
    let (last, events) = frames.split_last().unwrap();
    assert!(
        last["result"]["yaml"]
            .as_str()
            .is_some_and(|y| y.contains("graph")),
        "{last:#}"
    );
    assert!(!events.is_empty());
    for event in events {
        assert!(event["event"]["stage"].is_string(), "{event}");
        assert!(event["event"]["elapsed_ms"].is_u64(), "{event}");
    }
}

#[test]
fn an_unknown_streaming_function_ends_with_an_error_frame() {
    let frames = call("catalog_list", json!({}));
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0]["error"]["code"], json!("NOT_FOUND"));
}

#[test]
fn cancel_stream_answers_whether_the_call_was_running() {
    let studio = crate::commands::studio();
    let response = crate::commands::invoke(
        &studio,
        "cancel_stream",
        json!({"streamId": "never-started"}),
    );
    assert_eq!(response, Ok(json!(false)));
}
