//! What a desktop command costs: `plan_validate` on the UI's sample plan against the real
//! catalog (`block_specs/`), called directly through keiri-api and through Tauri's IPC layer
//! (mock runtime: argument deserialisation, ACL check, command dispatch, result
//! serialisation). The difference is the shell's overhead per keystroke-validation.
//!
//! Run: `cargo bench -p keiri-studio --bench ipc`. Numbers go into src-tauri/README.md.

use std::error::Error;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tauri::WebviewWindowBuilder;
use tauri::ipc::{CallbackFn, InvokeBody};
use tauri::test::{INVOKE_KEY, get_ipc_response, mock_builder, mock_context, noop_assets};
use tauri::webview::InvokeRequest;

const ITERATIONS: usize = 200;
const WARMUP: usize = 20;

// The plan the UI's tests use (ui/tests/fixtures/sample-plan.yaml).
const SAMPLE_PLAN: &str = "apiVersion: v1
id: invoice_review
version: 0.1.0
policy:
  on_error: stop
graph:
  - id: read_invoices
    block: csv.read
    in:
      path: input/invoices.csv
      encoding: auto
    out:
      rows: invoices
  - id: large_invoices
    block: transforms.filter_rows
    in:
      rows: \"${read_invoices.invoices}\"
      condition: 金額 >= 100000
    out:
      rows: large
  - id: save_large
    block: csv.write
    in:
      rows: \"${large_invoices.large}\"
      out_name: large_invoices.csv
";

fn measure(
    mut call: impl FnMut() -> Result<(), Box<dyn Error>>,
) -> Result<Vec<Duration>, Box<dyn Error>> {
    for _ in 0..WARMUP {
        call()?;
    }
    let mut times = Vec::with_capacity(ITERATIONS);
    for _ in 0..ITERATIONS {
        let start = Instant::now();
        call()?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok(times)
}

fn report(name: &str, times: &[Duration]) {
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    println!(
        "{name:<28} median {:>9.1?}  p95 {:>9.1?}  min {:>9.1?}  ({} runs)",
        at(0.5),
        at(0.95),
        at(0.0),
        times.len()
    );
}

fn main() -> Result<(), Box<dyn Error>> {
    let catalog = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../block_specs");
    if !catalog.is_dir() {
        return Err(format!("catalog not found at {}", catalog.display()).into());
    }
    let workspace = tempfile::tempdir()?;
    let ctx = keiri_api::Context::new(workspace.path()).with_catalog_dirs(vec![catalog]);

    let direct = measure(|| {
        let request: keiri_api::json::PlanValidateRequest =
            serde_json::from_value(json!({"yaml": SAMPLE_PLAN, "lang": "ja"}))?;
        let response = keiri_api::plan_validate(&ctx, request)?;
        if !response.valid {
            return Err("the sample plan should be valid".into());
        }
        Ok(())
    })?;

    let app =
        keiri_studio::setup(mock_builder(), ctx.clone()).build(mock_context(noop_assets()))?;
    let window = WebviewWindowBuilder::new(&app, "main", Default::default()).build()?;
    let via_ipc = measure(|| {
        let request = InvokeRequest {
            cmd: "plan_validate".into(),
            callback: CallbackFn(0),
            error: CallbackFn(1),
            url: if cfg!(any(windows, target_os = "android")) {
                "http://tauri.localhost"
            } else {
                "tauri://localhost"
            }
            .parse()?,
            body: InvokeBody::Json(json!({"request": {"yaml": SAMPLE_PLAN, "lang": "ja"}})),
            headers: Default::default(),
            invoke_key: INVOKE_KEY.to_string(),
        };
        let body = get_ipc_response(&window, request).map_err(|e| e.to_string())?;
        let response: Value = body.deserialize()?;
        if response["valid"] != json!(true) {
            return Err(format!("the sample plan should be valid: {response}").into());
        }
        Ok(())
    })?;

    report("keiri_api::plan_validate", &direct);
    report("invoke(\"plan_validate\")", &via_ipc);
    Ok(())
}
