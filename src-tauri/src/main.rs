// Keeps a console window from opening next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use std::process::ExitCode;

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
