use std::path::Path;

use serde_json::{Value, json};
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{
    INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder, mock_context, noop_assets,
};
use tauri::webview::InvokeRequest;
use tauri::{App, WebviewWindow, WebviewWindowBuilder};

/// A small catalog of our own, so these tests do not move when the bundled catalog grows.
const READ_SPEC: &str = "id: demo.read
version: 1.0.0
title_ja: 読み込み
title_en: Read
description: デモ用の読み込み
description_en: Reads for the demo
inputs:
  path: {type: string, required: true, description: パス}
outputs:
  rows: {type: array, description: 行}
";
const WRITE_SPEC: &str = "id: demo.write
version: 1.0.0
title_ja: 書き出し
title_en: Write
description: デモ用の書き出し
inputs:
  rows: {type: array, required: true, description: 行}
outputs: {}
";

const VALID_PLAN: &str = "apiVersion: v1
id: ipc_demo
version: 0.1.0
graph:
  - id: read
    block: demo.read
    in:
      path: input/a.csv
    out:
      rows: rows
  - id: write
    block: demo.write
    in:
      rows: \"${read.rows}\"
";

pub struct Studio {
    pub app: App<MockRuntime>,
    pub window: WebviewWindow<MockRuntime>,
    pub workspace: tempfile::TempDir,
}

pub fn studio() -> Studio {
    let workspace = tempfile::tempdir().unwrap();
    let catalog = workspace.path().join("block_specs");
    crate::write_file(&catalog.join("input/demo.read.yaml"), READ_SPEC);
    crate::write_file(&catalog.join("output/demo.write.yaml"), WRITE_SPEC);
    let ctx = keiri_api::Context::new(workspace.path())
        .with_catalog_dirs(vec![catalog])
        .with_config_dir(workspace.path().join("config"))
        .with_secrets(crate::MemorySecrets::shared());
    let app = keiri_studio::setup(mock_builder(), ctx)
        .build(mock_context(noop_assets()))
        .unwrap();
    let window = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .unwrap();
    Studio {
        app,
        window,
        workspace,
    }
}

/// The app as shipped: the real `tauri.conf.json` and capabilities, which create the main
/// window themselves.
fn shipped_studio() -> Studio {
    let workspace = tempfile::tempdir().unwrap();
    let catalog = workspace.path().join("block_specs");
    crate::write_file(&catalog.join("input/demo.read.yaml"), READ_SPEC);
    crate::write_file(&catalog.join("output/demo.write.yaml"), WRITE_SPEC);
    let ctx = keiri_api::Context::new(workspace.path()).with_catalog_dirs(vec![catalog]);
    let app = keiri_studio::setup(mock_builder(), ctx)
        .build(keiri_studio::tauri_context())
        .unwrap();
    // `build` leaves window creation to the event loop, which the mock runtime never starts;
    // open the configured window the way the app's start-up would.
    let config = app
        .config()
        .app
        .windows
        .first()
        .expect("tauri.conf.json declares a window")
        .clone();
    let window = WebviewWindowBuilder::from_config(&app, &config)
        .unwrap()
        .build()
        .unwrap();
    assert_eq!(window.label(), "main");
    Studio {
        app,
        window,
        workspace,
    }
}

/// Calls the keiri-api function `function` the way the UI does: through the one `call`
/// command, with `request` as its body.
pub fn call(studio: &Studio, function: &str, request: Value) -> Result<Value, Value> {
    invoke_command(
        studio,
        "call",
        json!({"function": function, "request": request}),
    )
}

/// Sends what the UI sends for `cmd` (`{"request": …}` as `body`): a keiri-api function goes
/// through the one `call` command, anything else is invoked by its own name.
pub fn invoke(studio: &Studio, cmd: &str, body: Value) -> Result<Value, Value> {
    if keiri_api::FUNCTIONS.contains(&cmd) {
        let mut args = json!({"function": cmd});
        if let Some(request) = body.get("request") {
            args["request"] = request.clone();
        }
        return invoke_command(studio, "call", args);
    }
    invoke_command(studio, cmd, body)
}

/// Sends `invoke(cmd, body)` to the command `cmd` and returns the JSON result or error.
pub fn invoke_command(studio: &Studio, cmd: &str, body: Value) -> Result<Value, Value> {
    let request = InvokeRequest {
        cmd: cmd.into(),
        callback: CallbackFn(0),
        error: CallbackFn(1),
        // The app's own origin; anything else counts as remote content, which may not call
        // app commands at all.
        url: if cfg!(any(windows, target_os = "android")) {
            "http://tauri.localhost"
        } else {
            "tauri://localhost"
        }
        .parse()
        .unwrap(),
        body: InvokeBody::Json(body),
        headers: Default::default(),
        invoke_key: INVOKE_KEY.to_string(),
    };
    get_ipc_response(&studio.window, request).map(|b| b.deserialize::<Value>().unwrap())
}

fn codes(response: &Value) -> Vec<String> {
    response["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

// check(yaml, expected valid, expected finding codes)
fn check_validate(yaml: &str, valid: bool, expect: &[&str]) {
    let studio = studio();
    let response = invoke(
        &studio,
        "plan_validate",
        json!({"request": {"yaml": yaml, "lang": "en"}}),
    )
    .unwrap_or_else(|e| panic!("plan_validate failed: {e}"));
    assert_eq!(response["valid"], json!(valid), "{response:#}");
    assert_eq!(codes(&response), expect, "{response:#}");
}

#[test]
fn plan_validate_accepts_a_valid_plan() {
    check_validate(VALID_PLAN, true, &[]);
}

#[test]
fn plan_validate_reports_an_unknown_block_with_its_line() {
    let yaml = VALID_PLAN.replace("block: demo.write", "block: demo.nope");
    check_validate(&yaml, false, &["block.unknown"]);
    let studio = studio();
    let response = invoke(
        &studio,
        "plan_validate",
        json!({"request": {"yaml": yaml, "lang": "en"}}),
    )
    .unwrap();
    let finding = &response["findings"][0];
    assert_eq!(finding["node_id"], json!("write"));
    assert_eq!(finding["line"], json!(12), "{finding:#}");
    assert_eq!(response["error_count"], json!(1));
}

#[test]
fn plan_validate_reports_a_missing_required_input() {
    let yaml = VALID_PLAN.replace("    in:\n      path: input/a.csv\n", "    in: {}\n");
    assert_ne!(yaml, VALID_PLAN);
    check_validate(&yaml, false, &["input.missing_required"]);
}

#[test]
fn plan_validate_speaks_the_requested_language() {
    let studio = studio();
    let yaml = VALID_PLAN.replace("block: demo.write", "block: demo.nope");
    let message = |lang: &str| {
        let response = invoke(
            &studio,
            "plan_validate",
            json!({"request": {"yaml": yaml, "lang": lang}}),
        )
        .unwrap();
        response["findings"][0]["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (ja, en) = (message("ja"), message("en"));
    assert_ne!(ja, en);
    assert!(en.is_ascii(), "{en}");
    assert!(!ja.is_ascii(), "{ja}");
}

#[test]
fn a_yaml_syntax_error_is_a_finding_not_an_error() {
    check_validate("graph: [\n", false, &["yaml.parse"]);
}

#[test]
fn a_request_of_the_wrong_shape_is_rejected_by_the_command() {
    let studio = studio();
    // No `request` key at all: Tauri refuses to call the command.
    let err = invoke_command(&studio, "call", json!({"function": "plan_validate"})).unwrap_err();
    assert!(err.as_str().is_some_and(|m| m.contains("request")), "{err}");
    // A request missing `yaml`, or with a `yaml` of the wrong type: the API refuses it.
    for request in [json!({"lang": "en"}), json!({"yaml": 42})] {
        let err = call(&studio, "plan_validate", request.clone()).unwrap_err();
        assert_eq!(err["code"], json!("INVALID_REQUEST"), "{request}: {err}");
    }
}

#[test]
fn catalog_list_returns_the_workspace_catalog() {
    let studio = studio();
    let response = call(&studio, "catalog_list", json!({})).unwrap();
    let ids: Vec<&str> = response["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["demo.read", "demo.write"]);
    let read = &response["blocks"][0];
    assert_eq!(read["category"], json!("input"));
    assert_eq!(read["title_en"], json!("Read"));
    assert_eq!(read["inputs"][0]["name"], json!("path"));
    assert_eq!(read["inputs"][0]["required"], json!(true));
    assert_eq!(response["issues"], json!([]));

    let filtered = invoke(
        &studio,
        "catalog_list",
        json!({"request": {"query": "WRITE"}}),
    )
    .unwrap();
    assert_eq!(filtered["blocks"].as_array().unwrap().len(), 1);
    assert_eq!(filtered["blocks"][0]["id"], json!("demo.write"));
}

#[test]
fn plan_register_saves_under_designs_without_overwriting() {
    let studio = studio();
    let body = json!({"yaml": VALID_PLAN, "lang": "ja"});
    let first = call(&studio, "plan_register", body.clone()).unwrap();
    let second = call(&studio, "plan_register", body).unwrap();
    assert_eq!(first["plan_id"], json!("ipc_demo"));
    let designs = studio.workspace.path().join("designs");
    for saved in [&first, &second] {
        let name = saved["file_name"].as_str().unwrap();
        assert!(
            name.starts_with("ipc_demo_") && name.ends_with(".yaml"),
            "{name}"
        );
        assert_eq!(
            std::fs::read_to_string(designs.join(name)).unwrap(),
            VALID_PLAN
        );
    }
    assert_ne!(first["file_name"], second["file_name"]);
}

#[test]
fn plan_register_refuses_an_invalid_plan_with_its_findings() {
    let studio = studio();
    let yaml = VALID_PLAN.replace("block: demo.write", "block: demo.nope");
    let err = call(&studio, "plan_register", json!({"yaml": yaml})).unwrap_err();
    assert_eq!(err["code"], json!("PLAN_INVALID"), "{err:#}");
    assert!(err["message"].is_string());
    assert_eq!(
        err["details"]["findings"][0]["code"],
        json!("block.unknown"),
        "{err:#}"
    );
    assert!(
        !studio
            .workspace
            .path()
            .join("designs")
            .exists_and_has_files()
    );
}

#[test]
fn plan_dry_run_orders_the_nodes() {
    let studio = studio();
    let response = invoke(
        &studio,
        "plan_dry_run",
        json!({"request": {"yaml": VALID_PLAN}}),
    )
    .unwrap();
    assert_eq!(response["plan_id"], json!("ipc_demo"));
    assert_eq!(response["order"], json!(["read", "write"]));
    assert_eq!(response["nodes"][1]["depends_on"], json!(["read"]));
}

trait DirExt {
    fn exists_and_has_files(&self) -> bool;
}

impl DirExt for Path {
    fn exists_and_has_files(&self) -> bool {
        std::fs::read_dir(self).is_ok_and(|mut d| d.next().is_some())
    }
}

#[test]
fn the_shipped_config_and_capabilities_let_the_main_window_call_every_command() {
    let studio = shipped_studio();
    assert_eq!(
        studio.app.config().product_name.as_deref(),
        Some("Keiri Studio")
    );
    let window = &studio.app.config().app.windows[0];
    assert_eq!(
        (window.title.as_str(), window.width, window.height),
        ("Keiri Studio", 1280.0, 800.0)
    );
    let calls = [
        ("catalog_list", json!({})),
        ("plan_validate", json!({"yaml": VALID_PLAN})),
        ("plan_dry_run", json!({"yaml": VALID_PLAN})),
        ("plan_register", json!({"yaml": VALID_PLAN})),
    ];
    for (cmd, request) in calls {
        let result = call(&studio, cmd, request);
        assert!(result.is_ok(), "{cmd}: {result:?}");
    }
}

/// With `custom-protocol` (a default feature) the built UI is inside the binary; without it a
/// plain `cargo build` would ship a window that points at the dev server.
#[cfg(feature = "custom-protocol")]
#[test]
fn a_default_build_embeds_the_built_ui() {
    let context = keiri_studio::tauri_context::<MockRuntime>();
    let index = context
        .assets()
        .get(&"index.html".into())
        .expect("ui/dist/index.html embedded");
    let html = String::from_utf8_lossy(&index);
    assert!(html.contains("<title>Keiri Studio</title>"), "{html}");
}
