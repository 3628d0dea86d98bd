//! The native file dialog: `pick_files` lets the user choose reference documents.
//!
//! This is the one command that is not a keiri-api function: only the desktop has a native
//! dialog (the browser uses `<input type=file>` and `documents_upload`). It returns absolute
//! paths, which the UI then passes to keiri-api functions, where the path policy applies.
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

use keiri_api::{ApiError, ErrorCode};
use serde::Deserialize;
use tauri::{AppHandle, Runtime};

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

/// Opens the native multi-file dialog and returns the chosen files' absolute paths, or an
/// empty list when the user cancels.
#[tauri::command]
pub async fn pick_files<R: Runtime>(
    app: AppHandle<R>,
    request: PickFilesRequest,
) -> Result<Vec<PathBuf>, ApiError> {
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
    Ok(chosen
        .unwrap_or_default()
        .into_iter()
        .map(|file| file.path().to_path_buf())
        .collect())
}
