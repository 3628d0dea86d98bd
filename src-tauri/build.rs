// Generates the Tauri context (config, capabilities, icons) consumed by `generate_context!`.
fn main() {
    tauri_build::build();
}
