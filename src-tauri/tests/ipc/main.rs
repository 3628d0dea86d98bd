//! The desktop commands driven through Tauri's IPC layer (mock runtime, no display): the same
//! `invoke(name, {request})` messages the UI sends, through the same `setup` the app uses.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod commands;
mod functions;
mod import;
mod stream;
mod workspace;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use keiri_api::settings::{SecretError, SecretStore};

/// An in-memory secret store, so no test touches the machine's keychain.
#[derive(Debug, Default)]
pub struct MemorySecrets(Mutex<HashMap<String, String>>);

impl MemorySecrets {
    pub fn shared() -> Arc<dyn SecretStore> {
        Arc::new(MemorySecrets::default())
    }
}

impl SecretStore for MemorySecrets {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        Ok(self.0.lock().unwrap().get(account).cloned())
    }
    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError> {
        self.0.lock().unwrap().insert(account.into(), secret.into());
        Ok(())
    }
    fn delete(&self, account: &str) -> Result<(), SecretError> {
        self.0.lock().unwrap().remove(account);
        Ok(())
    }
}

/// Writes a test set-up file. Atomicity (the reason `std::fs::write` is disallowed) does not
/// matter for fixtures created inside a fresh temporary directory.
#[allow(clippy::disallowed_methods)]
pub fn write_file(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}
