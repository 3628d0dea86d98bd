//! Which backend applies a patch: a type every module names, in its own file so that naming
//! it does not make a module depend on the crate root.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which backend applies a patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The built-in applier (no git needed).
    #[default]
    Native,
    /// `git apply`.
    Git,
}

impl BackendKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Native => "native",
            BackendKind::Git => "git",
        }
    }
}

impl std::str::FromStr for BackendKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "native" => Ok(BackendKind::Native),
            "git" => Ok(BackendKind::Git),
            other => Err(format!(
                "unknown backend {other:?} (expected native or git)"
            )),
        }
    }
}
