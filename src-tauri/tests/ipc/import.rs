//! Files dropped on the window: imported into `<workspace>/inputs/` and announced to the UI with
//! the `documents-imported` event; and the import function itself is no command.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use tauri::{DragDropEvent, Listener, PhysicalPosition, WindowEvent};

use crate::commands::{Studio, invoke, studio};

/// Drops `paths` on the studio's window, as Tauri reports a drop from the file manager, and
/// returns the `documents-imported` payload the UI receives.
fn drop_on_window(studio: &Studio, paths: Vec<PathBuf>) -> Value {
    let (tx, rx) = mpsc::channel();
    studio.app.listen_any(
        keiri_studio::import::DOCUMENTS_IMPORTED_EVENT,
        move |event| {
            let _ = tx.send(serde_json::from_str::<Value>(event.payload()).unwrap());
        },
    );
    let event = WindowEvent::DragDrop(DragDropEvent::Drop {
        paths,
        position: PhysicalPosition::new(10.0, 10.0),
    });
    keiri_studio::import::on_window_event(&studio.window.as_ref().window(), &event);
    // A generous bound only so that a broken import fails the test instead of hanging it.
    rx.recv_timeout(Duration::from_secs(60))
        .expect("the documents-imported event")
}

#[test]
fn a_drop_from_outside_the_workspace_is_imported_and_announced() {
    let studio = studio();
    let downloads = tempfile::tempdir().unwrap();
    let csv = downloads.path().join("請求書.csv");
    crate::write_file(&csv, "番号,金額\n1,100\n");
    let folder = downloads.path().join("folder");
    std::fs::create_dir_all(&folder).unwrap();
    let missing = downloads.path().join("missing.pdf");

    let payload = drop_on_window(&studio, vec![csv.clone(), folder.clone(), missing.clone()]);

    assert_eq!(
        payload["files"],
        json!([{
            "source": csv.display().to_string(),
            "path": "inputs/請求書.csv",
            "size_bytes": "番号,金額\n1,100\n".len(),
        }])
    );
    let errors = payload["errors"].as_array().unwrap();
    let outcome: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (e["source"].as_str().unwrap(), e["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        outcome,
        [
            (folder.to_str().unwrap(), "INVALID_REQUEST"),
            (missing.to_str().unwrap(), "NOT_FOUND"),
        ]
    );
    assert!(errors.iter().all(|e| e["message"].is_string()));
    // The UI passes the announced path on, and the document functions accept it.
    let text = invoke(
        &studio,
        "documents_extract",
        json!({"request": {"file_paths": ["inputs/請求書.csv"]}}),
    )
    .unwrap();
    assert_eq!(text["files"][0]["text"], "番号,金額\n1,100\n");
}

#[test]
fn only_a_drop_with_paths_imports() {
    use keiri_studio::import::dropped_paths;
    let file = PathBuf::from("/somewhere/a.txt");
    let at = PhysicalPosition::new(0.0, 0.0);
    let drag = |event| WindowEvent::DragDrop(event);
    for event in [
        drag(DragDropEvent::Enter {
            paths: vec![file.clone()],
            position: at,
        }),
        drag(DragDropEvent::Over { position: at }),
        drag(DragDropEvent::Leave),
        drag(DragDropEvent::Drop {
            paths: vec![],
            position: at,
        }),
        WindowEvent::Focused(true),
    ] {
        assert_eq!(dropped_paths(&event), None, "{event:?}");
    }
    let drop = drag(DragDropEvent::Drop {
        paths: vec![file.clone()],
        position: at,
    });
    assert_eq!(dropped_paths(&drop), Some(&[file][..]));
}

#[test]
fn the_import_is_no_command() {
    // documents_import reads any path: the web content must not be able to call it.
    let studio = studio();
    let err = invoke(
        &studio,
        "documents_import",
        json!({"request": {"paths": ["/etc/hostname"]}}),
    )
    .unwrap_err();
    assert!(
        err.as_str().unwrap_or_default().contains("not found"),
        "{err}"
    );
    assert!(!studio.workspace.path().join("inputs").exists());
}
