//! The Keiri Studio desktop shell: a Tauri 2 window around the web UI in `ui/`.
//!
//! The shell owns no behaviour. It builds one [`keiri_api::Context`] for the workspace
//! (`KEIRI_WORKSPACE`, else the folder saved in the settings, else the current directory),
//! puts it in Tauri's managed state and exposes the keiri-api functions as commands of the
//! same names ([`commands`]). The UI reaches the same functions over HTTP when served by
//! `keiri serve`, so the desktop and the browser never diverge.
//!
//! It must not grow logic of its own: anything a command does beyond converting arguments
//! belongs in keiri-api, where the CLI, the HTTP server and MCP get it too. It must not read
//! or write user files itself either; keiri-api applies the path policy.
//!
//! Besides the keiri-api functions it has three commands of its own: `call_stream` /
//! `cancel_stream` ([`stream`]: a streaming keiri-api function's events over a Tauri channel)
//! and `pick_files` ([`dialog`]: the native file dialog, whose files are imported into the
//! workspace). Files dropped on the window are imported too and announced to the UI with the
//! `documents-imported` event ([`import`]). Both import through keiri-api's
//! `documents_import`, which only the shell may call: it reads whatever path it is given, so it
//! is not a command, an HTTP route or an MCP tool.
//!
//! Dependencies: `tauri` 2 (the stable line; the registry also carries 3.0 alphas) for the
//! window, IPC and asset serving; `thiserror` for the typed start-up error; `rfd` for the
//! native file dialog; `serde`/`serde_json`/`tokio` (sync) for the commands' own arguments.

pub mod commands;
pub mod dialog;
pub mod import;
pub mod stream;

use std::path::PathBuf;

/// The environment variable naming the workspace the app opens.
pub const WORKSPACE_ENV: &str = "KEIRI_WORKSPACE";

/// Why the app could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Neither `KEIRI_WORKSPACE` nor the current directory gave a usable workspace.
    #[error("cannot determine the workspace directory (set {WORKSPACE_ENV})")]
    Workspace(#[source] std::io::Error),
    /// The workspace path is missing or not a directory.
    #[error("workspace {0} is not an existing directory")]
    NotADirectory(PathBuf),
    /// Tauri failed to create or run the window.
    #[error("the desktop window failed")]
    Tauri(#[source] tauri::Error),
}

impl Error {
    /// A stable code for scripts and logs; the message may change, the code does not.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Workspace(_) => "WORKSPACE_UNKNOWN",
            Error::NotADirectory(_) => "WORKSPACE_NOT_A_DIRECTORY",
            Error::Tauri(_) => "TAURI",
        }
    }
}

/// The workspace the app works in: `env_value` (from `KEIRI_WORKSPACE`) when set and
/// non-empty, else `current_dir`. A relative value resolves against `current_dir`, so
/// `KEIRI_WORKSPACE=examples` means the same as it would in a shell.
pub fn workspace_dir(
    env_value: Option<std::ffi::OsString>,
    current_dir: std::io::Result<PathBuf>,
) -> Result<PathBuf, Error> {
    let chosen = env_value.filter(|v| !v.is_empty()).map(PathBuf::from);
    let dir = match chosen {
        Some(dir) if dir.is_absolute() => dir,
        Some(dir) => current_dir.map_err(Error::Workspace)?.join(dir),
        None => current_dir.map_err(Error::Workspace)?,
    };
    if !dir.is_dir() {
        return Err(Error::NotADirectory(dir));
    }
    Ok(dir)
}

/// Adds the app's state and commands to `builder`. Generic over the runtime so the IPC tests
/// drive the very same setup through Tauri's mock runtime.
pub fn setup<R: tauri::Runtime>(
    builder: tauri::Builder<R>,
    ctx: keiri_api::Context,
) -> tauri::Builder<R> {
    builder
        .manage(ctx)
        .manage(stream::Streams::default())
        .on_window_event(import::on_window_event)
        .invoke_handler(tauri::generate_handler![
            commands::call,
            stream::call_stream,
            stream::cancel_stream,
            dialog::pick_files,
        ])
}

/// The app's Tauri context: `tauri.conf.json`, the capabilities, the icons and (with the
/// `custom-protocol` feature) the built UI, all embedded at compile time. Public so the IPC
/// tests check the real permissions rather than a mock's.
pub fn tauri_context<R: tauri::Runtime>() -> tauri::Context<R> {
    tauri::generate_context!()
}

/// Opens the window and runs until it is closed.
pub fn run() -> Result<(), Error> {
    // `KEIRI_WORKSPACE` wins; else the folder saved in the settings dialog, if it still exists.
    let saved = keiri_api::settings::default_config_dir()
        .and_then(|dir| keiri_api::settings::saved_workspace(&dir))
        .map(std::ffi::OsString::from);
    let chosen = std::env::var_os(WORKSPACE_ENV)
        .filter(|v| !v.is_empty())
        .or(saved);
    let workspace = workspace_dir(chosen, std::env::current_dir())?;
    let mut ctx = keiri_api::Context::new(workspace);
    // The window asks again while the embedding model loads (keyword results meanwhile).
    ctx.interactive = true;
    setup(tauri::Builder::default(), ctx)
        .run(tauri_context())
        .map_err(Error::Tauri)
}
