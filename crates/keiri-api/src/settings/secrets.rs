//! Where the studio's secrets and settings live on this machine: the [`SecretStore`] (the OS
//! keychain, this session's keys beside it, or none) and the config directory. A
//! [`crate::Context`] starts with both, so they sit below it and name nothing of it.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use crate::{ApiError, ErrorCode};

/// Overrides the config directory (tests, portable installs).
pub const CONFIG_DIR_ENV: &str = "KEIRI_CONFIG_DIR";
/// The keychain service the API keys are filed under (the app's identifier).
pub const KEYCHAIN_SERVICE: &str = "dev.keiri.studio";
/// `off` (or `none`, `0`, `false`): use no OS keychain at all ([`NoKeychain`]) — for CI and
/// end-to-end tests, which must not touch the machine's keychain, and for users who want no
/// key stored; a key can then still be kept for the session.
pub const KEYCHAIN_ENV: &str = "KEIRI_KEYCHAIN";

/// Where secrets are kept. Implemented by [`Keychain`]; tests inject an in-memory store.
///
/// `Debug` is required (a [`Context`] is `Debug`) and must never show a secret.
pub trait SecretStore: Send + Sync + fmt::Debug {
    /// The secret filed under `account`, `None` when there is none.
    fn get(&self, account: &str) -> Result<Option<String>, SecretError>;
    /// Stores (or replaces) the secret under `account`.
    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError>;
    /// Removes the secret under `account`; no error when there is none.
    fn delete(&self, account: &str) -> Result<(), SecretError>;
    /// The keys kept for this session beside the store, if it has such a place ([`WithSession`]).
    fn session(&self) -> Option<&SessionKeys> {
        None
    }
}

/// API keys kept for this process only: in memory, never written to a file, a log or the
/// keychain, and gone when the process ends. They serve a user whose machine has no keychain
/// (or who wants none used) for every model call of this session.
#[derive(Default)]
pub struct SessionKeys(Mutex<HashMap<String, String>>);

impl SessionKeys {
    fn keys(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        // A panic elsewhere while the lock was held leaves a map that is still whole.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The key kept under `account`.
    pub fn get(&self, account: &str) -> Option<String> {
        self.keys().get(account).cloned()
    }

    /// Keeps `key` under `account` until the process ends (or it is replaced or removed).
    pub fn set(&self, account: &str, key: &str) {
        self.keys().insert(account.to_string(), key.to_string());
    }

    /// Forgets the key under `account`, if any.
    pub fn remove(&self, account: &str) {
        self.keys().remove(account);
    }
}

impl fmt::Debug for SessionKeys {
    // Account names only: the values are keys.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys = self.keys();
        let mut accounts: Vec<&String> = keys.keys().collect();
        accounts.sort();
        f.debug_struct("SessionKeys")
            .field("accounts", &accounts)
            .finish()
    }
}

/// A secret store with this session's keys beside it: what every [`Context`] starts with.
#[derive(Debug, Default)]
pub struct WithSession<S> {
    store: S,
    session: SessionKeys,
}

impl<S: SecretStore> WithSession<S> {
    pub fn new(store: S) -> Self {
        WithSession {
            store,
            session: SessionKeys::default(),
        }
    }
}

impl<S: SecretStore> SecretStore for WithSession<S> {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        self.store.get(account)
    }
    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError> {
        self.store.set(account, secret)
    }
    fn delete(&self, account: &str) -> Result<(), SecretError> {
        self.store.delete(account)
    }
    fn session(&self) -> Option<&SessionKeys> {
        Some(&self.session)
    }
}

/// No keychain: every call is [`SecretError::Unavailable`]. Chosen with `KEIRI_KEYCHAIN=off`;
/// it is also what a machine without a Secret Service looks like.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoKeychain;

impl SecretStore for NoKeychain {
    fn get(&self, _: &str) -> Result<Option<String>, SecretError> {
        Err(NoKeychain::error())
    }
    fn set(&self, _: &str, _: &str) -> Result<(), SecretError> {
        Err(NoKeychain::error())
    }
    fn delete(&self, _: &str) -> Result<(), SecretError> {
        Err(NoKeychain::error())
    }
}

impl NoKeychain {
    fn error() -> SecretError {
        SecretError::Unavailable(format!("the keychain is switched off ({KEYCHAIN_ENV}=off)"))
    }
}

/// Why a [`SecretStore`] failed. Messages never contain the secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretError {
    /// There is no keychain to talk to (no Secret Service on the session bus, locked and the
    /// unlock was refused, an unsupported platform).
    #[error("the OS keychain is not available: {0}")]
    Unavailable(String),
    /// The keychain answered with an error.
    #[error("the OS keychain failed: {0}")]
    Failed(String),
}

impl From<SecretError> for ApiError {
    fn from(e: SecretError) -> Self {
        let code = match e {
            SecretError::Unavailable(_) => ErrorCode::KeychainUnavailable,
            SecretError::Failed(_) => ErrorCode::Internal,
        };
        ApiError::new(code, e.to_string())
    }
}

/// The OS keychain, through the `keyring` crate, under [`KEYCHAIN_SERVICE`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Keychain;

impl Keychain {
    fn entry(account: &str) -> Result<keyring::Entry, SecretError> {
        keyring::Entry::new(KEYCHAIN_SERVICE, account).map_err(keychain_error)
    }
}

fn keychain_error(e: keyring::Error) -> SecretError {
    match e {
        keyring::Error::NoDefaultStore
        | keyring::Error::NoStorageAccess(_)
        | keyring::Error::PlatformFailure(_)
        | keyring::Error::NotSupportedByStore(_) => SecretError::Unavailable(e.to_string()),
        other => SecretError::Failed(other.to_string()),
    }
}

impl SecretStore for Keychain {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        match Keychain::entry(account)?.get_password() {
            Ok(secret) => Ok(Some(secret)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(keychain_error(e)),
        }
    }

    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError> {
        Keychain::entry(account)?
            .set_password(secret)
            .map_err(keychain_error)
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        match Keychain::entry(account)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(e) => Err(keychain_error(e)),
        }
    }
}

/// The store a [`Context`] starts with: the OS keychain (or none, with `KEIRI_KEYCHAIN=off`),
/// with this session's keys beside it.
pub(crate) fn default_secret_store() -> Arc<dyn SecretStore> {
    let off = std::env::var(KEYCHAIN_ENV).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "off" | "none" | "0" | "false"
        )
    });
    if off {
        Arc::new(WithSession::new(NoKeychain))
    } else {
        Arc::new(WithSession::new(Keychain))
    }
}

/// The config directory: `KEIRI_CONFIG_DIR` when set and non-empty, else the user config
/// directory + `keiri-studio`; `None` when the platform has no such directory.
pub fn default_config_dir() -> Option<PathBuf> {
    match std::env::var_os(CONFIG_DIR_ENV) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::config_dir().map(|d| d.join("keiri-studio")),
    }
}
