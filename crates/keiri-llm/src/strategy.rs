//! How structured output was obtained ([`Strategy`]) and why a strategy failed
//! ([`StrategyFailure`]): named by the errors, the log and the client as well as by
//! `structured.rs`, so they live below all of them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::schema::Violation;

/// How structured output was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// `response_format: {type: json_schema, json_schema: {strict: true, …}}`.
    JsonSchema,
    /// A single forced function call whose parameters are the schema.
    FunctionCall,
    /// The schema in the prompt, JSON extracted from the text answer.
    FreeForm,
}

impl Strategy {
    /// Every strategy, in the order they are tried.
    pub const ALL: [Strategy; 3] = [
        Strategy::JsonSchema,
        Strategy::FunctionCall,
        Strategy::FreeForm,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::JsonSchema => "json_schema",
            Strategy::FunctionCall => "function_call",
            Strategy::FreeForm => "free_form",
        }
    }
}

/// Why one strategy did not produce the output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StrategyFailure {
    pub strategy: Strategy,
    /// An [`Error::code`], or `LLM_OUTPUT_INVALID` / `LLM_OUTPUT_TRUNCATED` for bad output.
    pub code: String,
    pub message: String,
    /// Where the output broke the schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
    /// Not tried: the provider rejected this strategy earlier in the session.
    #[serde(default)]
    pub skipped: bool,
}
