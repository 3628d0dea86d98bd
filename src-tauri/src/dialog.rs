//! The native file dialog: `pick_files` lets the user choose reference documents.
//!
//! This is the one command that is not a keiri-api function: only the desktop has a native
//! dialog (the browser uses `<input type=file>` and `documents_upload`). The user may choose
//! files anywhere (`~/Downloads`), which the path policy of the document functions refuses, so
//! the chosen files go through [`keiri_api::documents_import`] (copied into
//! `<workspace>/inputs/`; a file already in the workspace stays where it is) and the command
//! returns their workspace-relative paths. Only the user's own choice reaches that function:
//! the UI never names the paths (the request has no path in it).
//!
//! Threading: GTK may only be touched by the thread that runs its main loop, which in Tauri
//! is the main thread. As Tauri's own dialog plugin does, the command creates rfd's
//! `AsyncFileDialog` on the main thread (`run_on_main_thread`; rfd's GTK backend builds and
//! shows the dialog from that loop) and awaits its answer on an async worker: the window keeps
//! running while the dialog is open, and no thread blocks. (rfd's blocking `FileDialog` called
//! on the main thread would deadlock it: it waits for work only the main thread can do.)
//!
//! Dependency: `rfd` 0.17 with only its `gtk3` backend on Linux (no XDG portal: fewer crates,
//! and WebKitGTK already links GTK 3); Windows and macOS use their native dialogs.

use std::path::PathBuf;

use keiri_api::{ApiError, Context, DocumentsImportRequest, ErrorCode};
use serde::Deserialize;
use tauri::{AppHandle, Manager, Runtime};

/// What `pick_files` shows.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PickFilesRequest {
    /// The dialog's title.
    #[serde(default)]
    pub title: Option<String>,
    /// Offer only these extensions (without the dot, e.g. `["pdf", "xlsx"]`); all files when
    /// empty.
    #[serde(default)]
    pub extensions: Vec<String>,
    /// The name of the filter in the dialog (e.g. "Documents").
    #[serde(default)]
    pub filter_name: Option<String>,
}

/// Opens the native multi-file dialog, imports the chosen files into the workspace and returns
/// their workspace-relative paths (e.g. `inputs/invoices.csv`), or an empty list when the user
/// cancels. A file that cannot be imported (a folder, too large, unreadable) fails the whole
/// pick with its code, before anything is copied; `details.source` names it.
#[tauri::command]
pub async fn pick_files<R: Runtime>(
    app: AppHandle<R>,
    request: PickFilesRequest,
) -> Result<Vec<String>, ApiError> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.run_on_main_thread(move || {
        let mut dialog = rfd::AsyncFileDialog::new();
        if let Some(title) = &request.title {
            dialog = dialog.set_title(title);
        }
        if !request.extensions.is_empty() {
            let name = request.filter_name.as_deref().unwrap_or("Documents");
            dialog = dialog.add_filter(name, &request.extensions);
        }
        // The receiver only goes away when the command itself was dropped.
        let _ = tx.send(dialog.pick_files());
    })
    .map_err(|e| {
        ApiError::new(
            ErrorCode::Internal,
            format!("cannot open the file dialog: {e}"),
        )
    })?;
    let chosen = rx
        .await
        .map_err(|_| {
            ApiError::new(
                ErrorCode::Internal,
                "the file dialog was closed before it opened",
            )
        })?
        .await;
    let paths: Vec<PathBuf> = chosen
        .unwrap_or_default()
        .into_iter()
        .map(|file| file.path().to_path_buf())
        .collect();
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    // Copying is blocking file IO: it runs on the blocking pool, not on an async worker.
    let ctx = app.state::<Context>().inner().clone();
    let imported = tauri::async_runtime::spawn_blocking(move || {
        keiri_api::documents_import(&ctx, DocumentsImportRequest { paths })
    })
    .await
    .map_err(|e| ApiError::new(ErrorCode::Internal, format!("importing the files: {e}")))??;
    Ok(imported.files.into_iter().map(|file| file.path).collect())
}
