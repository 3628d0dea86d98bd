//! Documents dropped on the window: imported into the workspace, then announced to the UI.
//!
//! A drop from the file manager gives absolute paths, often outside the workspace, which the
//! keiri-api path policy refuses. The shell therefore handles the drop itself, on the Rust side:
//! Tauri's window event [`DragDropEvent::Drop`] (a webview window reports its webview's drops as
//! window events), whose paths go to [`keiri_api::documents_import`] one by one, off the main
//! thread. The outcome is emitted to the window as the event [`DOCUMENTS_IMPORTED_EVENT`]
//! (`{files, errors}`), which the UI listens to; the UI never sees the raw paths, so it only ever
//! hands workspace paths to the document functions.
//!
//! Each path is imported separately so that one unreadable file does not lose the others: each
//! ends up in `files` or in `errors` with its code.

use std::path::PathBuf;

use keiri_api::{ApiError, Context, DocumentsImportRequest, ImportedFile};
use serde::Serialize;
use tauri::{AppHandle, DragDropEvent, Emitter, Manager, Runtime, Window, WindowEvent};

/// The event the UI listens to (`listen('documents-imported', …)`).
pub const DOCUMENTS_IMPORTED_EVENT: &str = "documents-imported";

/// The payload of [`DOCUMENTS_IMPORTED_EVENT`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct DocumentsImported {
    /// The files now in the workspace, in drop order.
    pub files: Vec<ImportedFile>,
    /// The paths that could not be imported.
    pub errors: Vec<ImportError>,
}

/// A dropped path that was not imported: `{source, code, message, details?}`.
#[derive(Debug, Clone, Serialize)]
pub struct ImportError {
    /// The path as dropped.
    pub source: String,
    #[serde(flatten)]
    pub error: ApiError,
}

/// Imports each of `paths` on its own (see the module docs).
pub fn import_each(ctx: &Context, paths: Vec<PathBuf>) -> DocumentsImported {
    let mut outcome = DocumentsImported::default();
    for path in paths {
        let source = path.display().to_string();
        let request = DocumentsImportRequest { paths: vec![path] };
        match keiri_api::documents_import(ctx, request) {
            Ok(response) => outcome.files.extend(response.files),
            Err(error) => outcome.errors.push(ImportError { source, error }),
        }
    }
    outcome
}

/// The app's window event handler: imports what is dropped on a window.
pub fn on_window_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    if let Some(paths) = dropped_paths(event) {
        import_dropped(window.app_handle().clone(), window.label(), paths.to_vec());
    }
}

/// The paths of a drop that has something to import; `None` for every other event (entering,
/// hovering, leaving, or a drop of nothing).
pub fn dropped_paths(event: &WindowEvent) -> Option<&[PathBuf]> {
    match event {
        WindowEvent::DragDrop(DragDropEvent::Drop { paths, .. }) if !paths.is_empty() => {
            Some(paths)
        }
        _ => None,
    }
}

/// Imports `paths` on the blocking pool (copies must not stall the window's event loop) and
/// emits [`DOCUMENTS_IMPORTED_EVENT`] to the window labelled `label`.
pub fn import_dropped<R: Runtime>(
    app: AppHandle<R>,
    label: &str,
    paths: Vec<PathBuf>,
) -> tauri::async_runtime::JoinHandle<()> {
    let label = label.to_string();
    tauri::async_runtime::spawn_blocking(move || {
        let ctx = app.state::<Context>().inner().clone();
        let outcome = import_each(&ctx, paths);
        // Fails only when the window is gone, and then nobody is left to tell.
        let _ = app.emit_to(label.as_str(), DOCUMENTS_IMPORTED_EVENT, outcome);
    })
}
