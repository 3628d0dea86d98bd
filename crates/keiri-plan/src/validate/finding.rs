//! [`Finding`], the one finding type of the validator, the planner, the API, the CLI and the
//! UI, and its [`Severity`].

use serde::{Deserialize, Serialize};

use super::FindingCode;

/// How bad a finding is.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One problem found in a plan: the one finding type of the validator, the planner, the API,
/// the CLI and the UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Finding {
    pub code: FindingCode,
    pub severity: Severity,
    pub node_id: Option<String>,
    /// JSON pointer into the plan.
    pub path: String,
    pub message: String,
    pub hint: Option<String>,
    /// The values that would fix it, when there is a closed set (a file's real columns for
    /// `column.unknown`): what a question offers the user to pick from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<String>,
    /// The column a `column.unknown` is about: named by the plan, absent from the rows. The
    /// value at `path` may be an expression that reads it among other columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub missing_column: Option<String>,
    /// 1-based line and column of the part `path` points at, when the plan was read from text
    /// ([`crate::check`] fills them; [`super::validate`] has no text).
    #[serde(default)]
    pub line: Option<usize>,
    #[serde(default)]
    pub column: Option<usize>,
}

impl Finding {
    /// An error `code` at `path` (of node `node_id`), with nothing more known: no hint, no
    /// choices, no line.
    pub fn error(
        code: FindingCode,
        node_id: Option<String>,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> Finding {
        Finding {
            code,
            severity: Severity::Error,
            node_id,
            path: path.into(),
            message: message.into(),
            hint: None,
            choices: Vec::new(),
            missing_column: None,
            line: None,
            column: None,
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
