//! The desktop commands driven through Tauri's IPC layer (mock runtime, no display): the same
//! `invoke(name, {request})` messages the UI sends, through the same `setup` the app uses.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod commands;
mod workspace;

/// Writes a test set-up file. Atomicity (the reason `std::fs::write` is disallowed) does not
/// matter for fixtures created inside a fresh temporary directory.
#[allow(clippy::disallowed_methods)]
pub fn write_file(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}
