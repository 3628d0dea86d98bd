use keiri_api::Context;

use keiri_api::*;
use serde_json::json;

fn ctx(ws: &std::path::Path) -> Context {
    let catalog = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
    Context::new(ws).with_catalog_dirs(vec![catalog])
}

fn check(body: serde_json::Value, expect: Result<&str, &str>) {
    let ws = tempfile::tempdir().unwrap();
    match (
        crate::support::call(&ctx(ws.path()), "blocks_retrieve", body),
        expect,
    ) {
        (Ok(v), Ok(first_id)) => {
            assert_eq!(v["candidates"][0]["id"], first_id, "{v}");
            assert_eq!(v["mode"], "bm25", "{v}");
        }
        (Err(e), Err(code)) => assert_eq!(e.code.as_str(), code),
        (got, want) => panic!("got {got:?}, want {want:?}"),
    }
}

/// The local model's directory, or `None` (with a message) where it was not fetched; in CI
/// (`make test` fetches it) a missing model is a failure.
fn model_dir() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("KEIRI_EMBED_MODEL_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../models/multilingual-e5-small")
        });
    if dir.join(keiri_search::embed::MODEL_FILE).is_file() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").is_err(),
        "CI but the model is missing in {}",
        dir.display()
    );
    eprintln!(
        "SKIPPED: the local embedding model is not in {}",
        dir.display()
    );
    None
}

/// A folder of its own holding links to the model files of `dir`: the process loads a model
/// once per folder, so a test that watches the model load uses one no other test loads.
fn private_model(dir: &std::path::Path) -> tempfile::TempDir {
    let own = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let to = own.path().join(entry.file_name());
        #[cfg(unix)]
        std::os::unix::fs::symlink(entry.path(), to).unwrap();
        #[cfg(not(unix))]
        std::fs::copy(entry.path(), to).unwrap();
    }
    own
}

/// A context whose embeddings use the local model in `dir`.
fn local_model_ctx(
    ws: &std::path::Path,
    config: &std::path::Path,
    dir: &std::path::Path,
) -> Context {
    keiri_fs::write_atomic(
        &ws.join(".env"),
        format!(
            "KEIRI_EMBEDDER=local\nKEIRI_EMBED_MODEL_DIR={}\n",
            dir.display()
        )
        .as_bytes(),
    )
    .unwrap();
    ctx(ws).with_config_dir(config.to_path_buf())
}

#[test]
fn prewarm_loads_the_local_model_before_the_first_search() {
    let Some(shared) = model_dir() else { return };
    let own = private_model(&shared);
    let dir = own.path().to_path_buf();
    let (ws, config) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ctx = local_model_ctx(ws.path(), config.path(), &dir);
    assert!(!keiri_search::embed::E5Embedder::is_loaded(&dir));
    prewarm(&ctx).unwrap().join().unwrap();
    assert!(keiri_search::embed::E5Embedder::is_loaded(&dir));
}

#[test]
fn a_window_gets_keyword_results_while_the_model_loads_then_the_hybrid_ranking() {
    let Some(shared) = model_dir() else { return };
    let own = private_model(&shared);
    let dir = own.path().to_path_buf();
    let (ws, config) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut ctx = local_model_ctx(ws.path(), config.path(), &dir);
    ctx.interactive = true;
    let body = json!({"instruction": "請求書の重複を検出したい"});
    let first = crate::support::call(&ctx, "blocks_retrieve", body.clone()).unwrap();
    assert_eq!(first["mode"], "bm25", "{first:#}");
    assert_eq!(first["embedding_progress"]["done"], 0, "{first:#}");
    assert!(first["embedding_progress"]["total"].as_u64().unwrap() > 0);
    assert!(!first["candidates"].as_array().unwrap().is_empty());
    // The window asks again; by then the model has loaded (waited for here, not timed).
    for _ in 0..2400 {
        if keiri_search::embed::E5Embedder::is_loaded(&dir) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let second = crate::support::call(&ctx, "blocks_retrieve", body).unwrap();
    assert_eq!(second["mode"], "hybrid", "{second:#}");
    assert!(second["embedding_progress"].is_null(), "{second:#}");
}

#[test]
fn a_one_shot_caller_waits_for_the_model() {
    let Some(dir) = model_dir() else { return };
    let (ws, config) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let ctx = local_model_ctx(ws.path(), config.path(), &dir);
    assert!(
        !ctx.interactive,
        "the CLI and MCP contexts are not interactive"
    );
    let first = crate::support::call(
        &ctx,
        "blocks_retrieve",
        json!({"instruction": "請求書の重複を検出したい"}),
    )
    .unwrap();
    assert_eq!(first["mode"], "hybrid", "{first:#}");
}

#[test]
fn dispatch_blocks_retrieve() {
    check(
        json!({"instruction": "入金消込", "mode": "bm25"}),
        Ok("matching.bank_reconciliation"),
    );
    check(json!({"instruction": "x", "k": 3}), Err("INVALID_REQUEST"));
    check(
        json!({"instruction": "x", "mode": "fast"}),
        Err("INVALID_REQUEST"),
    );
}

#[test]
fn attached_documents_are_digested_into_the_query() {
    let ws = tempfile::tempdir().unwrap();
    keiri_fs::write_atomic(
        &ws.path().join("list.csv"),
        "vendor,invoice_no,amount\n".as_bytes(),
    )
    .unwrap();
    let body = json!({"instruction": "重複チェック", "mode": "bm25", "docs": ["list.csv"]});
    let v = crate::support::call(&ctx(ws.path()), "blocks_retrieve", body).unwrap();
    let duplicates = v["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "matching.duplicate_invoices")
        .unwrap();
    // "vendor" and "invoice" come from the attached CSV's header, not the instruction.
    let matched = duplicates["matched"].to_string();
    assert!(
        matched.contains("vendor") && matched.contains("invoice"),
        "{matched}"
    );
}

#[test]
fn a_document_outside_the_workspace_is_not_read() {
    let ws = tempfile::tempdir().unwrap();
    for doc in [
        "/etc/passwd",
        "../x.txt",
        "..\\x.txt",
        "file:///etc/passwd",
        "~/x",
    ] {
        let body = json!({"instruction": "入金消込", "mode": "bm25", "docs": [doc]});
        let err = crate::support::call(&ctx(ws.path()), "blocks_retrieve", body).unwrap_err();
        assert_eq!(err.code, keiri_api::ErrorCode::PathDenied, "{doc}");
    }
    let body = json!({"instruction": "入金消込", "mode": "bm25", "docs": ["missing.txt"]});
    let v = crate::support::call(&ctx(ws.path()), "blocks_retrieve", body).unwrap();
    let notes = v["notes"].to_string();
    assert!(notes.contains("NOT_FOUND"), "{notes}");
    assert_eq!(v["candidates"][0]["id"], "matching.bank_reconciliation");
}
