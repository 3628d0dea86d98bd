// Keeps a console window from opening next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use std::process::ExitCode;

// The runtime's allocator, as in `keiri` (crates/keiri-cli/src/main.rs says why): the window
// runs the same plans (試行実行).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> ExitCode {
    match keiri_studio::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // The whole cause chain: Tauri's own reason is in the source, not the top error.
            let mut message = err.to_string();
            let mut source = std::error::Error::source(&err);
            while let Some(cause) = source {
                message.push_str(": ");
                message.push_str(&cause.to_string());
                source = cause.source();
            }
            eprintln!("keiri-studio: {message} [{}]", err.code());
            ExitCode::FAILURE
        }
    }
}
