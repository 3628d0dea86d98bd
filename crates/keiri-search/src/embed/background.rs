//! Embedding passages in the background: the texts that neither the bundled pack nor the disk
//! cache holds (a workspace's own blocks) are embedded on a thread of their own, while the
//! caller serves BM25 results at once and reports the progress.
//!
//! One job runs per model at a time, process-wide: a second request while it runs gets its
//! progress instead of starting a competing job that would double the work on two cores.
//! The job's vectors go to the embedder's disk cache as it computes them and are also kept
//! in memory, so a process without a cache directory still becomes ready.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{EmbedKind, Embedder};
use crate::error::Error;

/// Passages per batch: small enough that the progress moves visibly, large enough that the
/// per-call overhead does not matter.
const BATCH: usize = 8;

/// How far a background embedding has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Progress {
    /// Passages embedded so far.
    pub done: usize,
    /// Passages to embed in all.
    pub total: usize,
}

/// What [`prepare_passages`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Prepared {
    /// Every passage has its vector, in order.
    Ready(Vec<Vec<f32>>),
    /// Some passages are still being embedded in the background.
    Pending(Progress),
}

struct Job {
    done: AtomicUsize,
    total: usize,
    /// Vectors computed by this job, by text.
    vectors: Mutex<HashMap<String, Vec<f32>>>,
    state: Mutex<JobState>,
}

#[derive(Debug, Clone, PartialEq)]
enum JobState {
    Running,
    Finished,
    Failed(String),
}

impl Job {
    fn state(&self) -> JobState {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn set_state(&self, state: JobState) {
        *self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = state;
    }

    fn progress(&self) -> Progress {
        Progress {
            done: self.done.load(Ordering::Relaxed),
            total: self.total,
        }
    }
}

/// The jobs by model name (the last one of each model, running or not).
fn jobs() -> &'static Mutex<HashMap<String, Arc<Job>>> {
    static JOBS: OnceLock<Mutex<HashMap<String, Arc<Job>>>> = OnceLock::new();
    JOBS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The passage vectors of `texts` when every one is at hand (pack, cache, or a finished
/// background job), else the progress of the background job that embeds the missing ones,
/// started here when none runs for this model. A failed job is reported once as an error
/// and retried on the next call.
pub fn prepare_passages(embedder: &Arc<dyn Embedder>, texts: &[String]) -> Result<Prepared, Error> {
    let model = embedder.name().to_string();
    let mut found = embedder.lookup(texts, EmbedKind::Passage);
    if found.len() != texts.len() {
        found = vec![None; texts.len()];
    }
    let mut registry = jobs()
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let job = registry.get(&model).cloned();
    if let Some(job) = &job {
        let vectors = job
            .vectors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (slot, text) in found.iter_mut().zip(texts) {
            if slot.is_none() {
                *slot = vectors.get(text).cloned();
            }
        }
    }
    let missing: Vec<String> = texts
        .iter()
        .zip(&found)
        .filter(|(_, v)| v.is_none())
        .map(|(t, _)| t.clone())
        .collect();
    if missing.is_empty() {
        return Ok(Prepared::Ready(found.into_iter().flatten().collect()));
    }
    if let Some(job) = job {
        match job.state() {
            JobState::Running => return Ok(Prepared::Pending(job.progress())),
            JobState::Failed(reason) => {
                registry.remove(&model);
                return Err(Error::Http(format!(
                    "embedding the workspace's blocks in the background failed: {reason}"
                )));
            }
            JobState::Finished => {}
        }
    }
    let mut unique = missing;
    unique.sort();
    unique.dedup();
    let job = Arc::new(Job {
        done: AtomicUsize::new(0),
        total: unique.len(),
        vectors: Mutex::new(HashMap::new()),
        state: Mutex::new(JobState::Running),
    });
    registry.insert(model, job.clone());
    drop(registry);
    let progress = job.progress();
    let embedder = embedder.clone();
    let worker = job.clone();
    let spawned = std::thread::Builder::new()
        .name("keiri-embed".into())
        .spawn(move || {
            // A panicking embedder must not leave the job running for ever: whoever waits
            // for it ([`crate::Index::build_waiting`]) would wait for ever too.
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run(&*embedder, &worker, &unique)
            }));
            if ran.is_err() {
                worker.set_state(JobState::Failed("the embedder panicked".into()));
            }
        });
    if let Err(e) = spawned {
        job.set_state(JobState::Failed(format!("could not start a thread: {e}")));
    }
    Ok(Prepared::Pending(progress))
}

fn run(embedder: &dyn Embedder, job: &Job, texts: &[String]) {
    for batch in texts.chunks(BATCH) {
        match embedder.embed(batch, EmbedKind::Passage) {
            Ok(vectors) if vectors.len() == batch.len() => {
                let mut kept = job
                    .vectors
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                for (text, vector) in batch.iter().zip(vectors) {
                    kept.insert(text.clone(), vector);
                }
                drop(kept);
                job.done.fetch_add(batch.len(), Ordering::Relaxed);
            }
            Ok(vectors) => {
                job.set_state(JobState::Failed(format!(
                    "{} returned {} vectors for {} texts",
                    embedder.name(),
                    vectors.len(),
                    batch.len()
                )));
                return;
            }
            Err(e) => {
                job.set_state(JobState::Failed(e.to_string()));
                return;
            }
        }
    }
    job.set_state(JobState::Finished);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    /// Embeds only when the test lets it: each batch waits for one message.
    struct Gated {
        name: String,
        gate: Mutex<mpsc::Receiver<()>>,
        fail: bool,
    }

    impl Embedder for Gated {
        fn name(&self) -> &str {
            &self.name
        }
        fn embed(&self, texts: &[String], _: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
            self.gate.lock().unwrap().recv().unwrap();
            if self.fail {
                return Err(Error::Http("boom".into()));
            }
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        }
    }

    fn gated(name: &str, fail: bool) -> (Arc<dyn Embedder>, mpsc::Sender<()>) {
        let (tx, rx) = mpsc::channel();
        let e = Gated {
            name: name.into(),
            gate: Mutex::new(rx),
            fail,
        };
        (Arc::new(e), tx)
    }

    /// Polls until the job of `model` leaves the running state (no time limit of its own:
    /// nextest's slow-test timeout catches a hang).
    fn settle(model: &str) {
        loop {
            let job = jobs().lock().unwrap().get(model).cloned();
            match job.map(|j| j.state()) {
                Some(JobState::Running) => std::thread::sleep(std::time::Duration::from_millis(5)),
                _ => return,
            }
        }
    }

    #[test]
    fn missing_passages_are_embedded_in_the_background_with_progress() {
        let (embedder, gate) = gated("test:gated-ok", false);
        let texts: Vec<String> = (1..=10).map(|n| "x".repeat(n)).collect();
        assert_eq!(
            prepare_passages(&embedder, &texts).unwrap(),
            Prepared::Pending(Progress { done: 0, total: 10 })
        );
        // A second call while the job runs reports it rather than starting another one.
        assert!(matches!(
            prepare_passages(&embedder, &texts).unwrap(),
            Prepared::Pending(Progress { total: 10, .. })
        ));
        gate.send(()).unwrap(); // first batch of 8
        gate.send(()).unwrap(); // the last 2
        settle("test:gated-ok");
        let Prepared::Ready(vectors) = prepare_passages(&embedder, &texts).unwrap() else {
            panic!("not ready after the job finished");
        };
        assert_eq!(vectors.len(), 10);
        assert_eq!(vectors[9], vec![10.0]);
    }

    #[test]
    fn a_failed_job_is_reported_and_retried() {
        let (embedder, gate) = gated("test:gated-fail", true);
        let texts = vec!["a".to_string()];
        assert!(matches!(
            prepare_passages(&embedder, &texts).unwrap(),
            Prepared::Pending(_)
        ));
        gate.send(()).unwrap();
        settle("test:gated-fail");
        let err = prepare_passages(&embedder, &texts).unwrap_err();
        assert!(err.to_string().contains("boom"), "{err}");
        // The next call starts a new job.
        assert!(matches!(
            prepare_passages(&embedder, &texts).unwrap(),
            Prepared::Pending(_)
        ));
        gate.send(()).unwrap();
        settle("test:gated-fail");
    }
}
