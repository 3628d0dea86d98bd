//! The runs in progress in one process: what a [`crate::Context`] holds so that a run can be
//! cancelled from another request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use keiri_llm::CancellationToken;

/// The runs in progress in one process, by run id (see [`Context::running`]).
#[derive(Debug, Clone, Default)]
pub struct Running(pub(super) Arc<Mutex<HashMap<String, CancellationToken>>>);

impl Running {
    pub(super) fn start(&self, run_id: &str, token: CancellationToken) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(run_id.to_string(), token);
    }

    pub(super) fn finish(&self, run_id: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(run_id);
    }

    pub(super) fn cancel(&self, run_id: &str) -> bool {
        let running = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        running.get(run_id).map(CancellationToken::cancel).is_some()
    }
}
