//! The planner of Keiri Studio: an instruction, the attached documents' digest and our
//! templates become a plan that validates.
//!
//! * [`generate_plan`] runs extracting → retrieving → skeleton → questions → wiring →
//!   validating → repair n/N, sending [`Progress`] on a channel. Stage 1 asks for the skeleton
//!   (nodes with purposes, plus open points as typed questions); stage 2 wires inputs and
//!   outputs, turning anything ambiguous into `${vars.*}`. Both requests carry schemas built
//!   from the candidates ([`schema`]): `block` is an enum of the candidate ids and each node
//!   variant's keys are that block's ports, so nothing unknown can be sent under a strict
//!   provider, and [`schema::check_wiring`] enforces the same whitelists (and the
//!   `ai.process_llm` contract) on free-form answers. Findings go back to the model with the
//!   spec excerpts, the node-level diff and the template contracts involved, up to
//!   `max_repair_attempts` times; every attempt is kept. Errors that only the user can fix
//!   (an undefined `${vars.*}`) become [`keiri_plan::Requirement`]s instead of a repair.
//! * [`ApplyMode::Compose`] needs no model: templates (named or retrieved) are merged by
//!   their contracts with [`keiri_plan::compose`], validated, and the questions built.
//!   [`select_templates`] keeps the templates whose job the instruction names (their
//!   `job_words`, [`intent::names_job`]), ranked with the workspace's shared retriever
//!   ([`keiri_search::Retriever`], BM25 over their ids, titles, descriptions and tags), the
//!   one that also gives the candidate blocks: the planner offers the model exactly the
//!   candidates the Candidates panel shows. The attached documents fit files and columns,
//!   never choose a template. When no template does the job, the status is
//!   [`Status::NoFit`] with the nearest templates and blocks, and nothing is composed.
//! * [`sample_run`]: what the repair loop is told when a drafted plan fails on the sample
//!   files (verify-by-running): findings built from the plan and column names, not the data.
//! * [`eval`]: the planner eval harness behind `keiri eval planner` (case file, first-pass
//!   validity, validity after repair, unknown ids / keys, consistency over runs).
//!
//! This crate must not read the process environment (the fallback flag is an option, the
//! provider comes in as an [`keiri_llm::Llm`]), must not write plans (the caller registers
//! them through `keiri-plan`), and never returns a fallback plan unless asked to, and then
//! marked as one.
//!
//! Dependencies and why:
//! * `keiri-llm`: the only way to a model (structured output with strategy fallbacks,
//!   retries, the event log, and the fake server for the tests).
//! * `keiri-plan`: plan model, validator, templates, compose and requirements.
//! * `keiri-search`: the shared retriever of the candidate blocks and of the templates;
//!   `keiri-docs`: the document digest.
//! * `serde_path_to_error`: the JSON pointer (and so the line) of a bad field in an eval case
//!   file, as keiri-plan does for specs.
//! * `toon-format`: the maintained TOON encoder for the catalog in the prompt (fewer tokens
//!   than JSON, measured in the README).
//! * `tokio`: the progress channel (`mpsc::UnboundedSender`), usable from the CLI and the UI.

mod error;
pub mod eval;
mod files;
mod generate;
pub mod intent;
pub mod offline_eval;
pub mod prompt;
pub mod sample_run;
pub mod schema;
pub mod values;

pub use error::Error;
pub use files::{
    MAX_TABLE_FILES, check_plan, check_plan_as_run, file_schemas, is_table_path, table_paths,
};
pub use generate::{
    ApplyMode, Attempt, Context, DEFAULT_MAX_DOCS_CHARS, DEFAULT_MAX_REPAIR_ATTEMPTS,
    GenerateOptions, GeneratedPlan, Progress, RepairRound, Stage, Status, Verifier, VerifyRun,
    compose_plan, fallback_allowed, generate_plan, node_diff, offline_note, select_templates,
    to_plan,
};
pub use sample_run::sample_run_issues;

/// The document digest for the prompt, and the files that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct DocumentDigest {
    /// About `max_chars` characters; empty when no document was given or none had text.
    pub digest: String,
    /// One entry per file that failed (`path: CODE message`), so the caller can say which
    /// documents the plan was made without.
    pub unreadable: Vec<String>,
}

/// The digest of the documents at `paths` (through the caller's path policy), about
/// `max_chars` long. A file that cannot be read is listed in `unreadable`; the others are
/// still digested.
pub fn digest_documents(
    policy: &keiri_fs::PathPolicy,
    paths: &[String],
    max_chars: usize,
) -> Result<DocumentDigest, Error> {
    if paths.is_empty() {
        return Ok(DocumentDigest::default());
    }
    let request: keiri_docs::DigestRequest = serde_json::from_value(serde_json::json!({
        "file_paths": paths,
        "max_chars": max_chars,
    }))
    .map_err(|e| Error::InvalidArgument(format!("digest request: {e}")))?;
    match keiri_docs::digest(policy, &request, keiri_docs::Cache::shared()) {
        Ok(keiri_docs::Output::Json(response)) => Ok(DocumentDigest {
            digest: if response.empty {
                String::new()
            } else {
                response.digest
            },
            unreadable: response
                .errors
                .iter()
                .map(|e| {
                    format!(
                        "{}: {} {}",
                        e.file_path.as_deref().unwrap_or("-"),
                        e.code,
                        e.message
                    )
                })
                .collect(),
        }),
        Ok(keiri_docs::Output::Toon(_)) => Err(Error::InvalidArgument(
            "the digest came back as TOON; JSON was asked for".into(),
        )),
        Err(e) => Err(Error::Documents(e)),
    }
}
